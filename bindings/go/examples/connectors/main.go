// Command connectors reads a Connect cluster's config topic with franz-go, a pure-Go Kafka
// client, and prints the connectors a Java worker would hold: each one's target state, task
// count and class.
//
//	go run . -bootstrap localhost:9092 -topic connect-configs
//
// ReadTopic is the whole recipe: sample each partition's end, read every partition from its
// start with franz-go, hand each record to the machine, stop at the ends, mark it caught up.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	connectstate "example.invalid/connect-state/bindings/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadTopic reads topic from its start to the end offsets sampled first into m, and marks m
// caught up.
func ReadTopic(ctx context.Context, seeds []string, topic string, m *connectstate.Machine) error {
	admin, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer admin.Close()
	starts, err := kadm.NewClient(admin).ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return fmt.Errorf("the start offsets of %s: %w", topic, err)
	}
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("the end offsets of %s: %w", topic, err)
	}
	if _, ok := ends[topic]; !ok {
		return fmt.Errorf("no topic %s", topic)
	}
	// The next offset to reach, per partition that holds records.
	remaining := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	ends.Each(func(end kadm.ListedOffset) {
		start, _ := starts.Lookup(topic, end.Partition)
		if end.Offset > start.Offset {
			remaining[end.Partition] = end.Offset
			from[end.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(remaining) > 0 {
		reader, err := kgo.NewClient(
			kgo.SeedBrokers(seeds...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
			// A partition's end may be one past a transaction marker: keep markers to see it.
			kgo.KeepControlRecords(),
		)
		if err != nil {
			return err
		}
		defer reader.Close()
		for len(remaining) > 0 {
			fetches := reader.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s not read to its end (partitions %v left): %w", topic, remaining, err)
			}
			var failed error
			fetches.EachError(func(_ string, _ int32, err error) { failed = errors.Join(failed, err) })
			if failed != nil {
				return failed
			}
			for iter := fetches.RecordIter(); !iter.Done(); {
				r := iter.Next()
				end, reading := remaining[r.Partition]
				if !reading {
					continue
				}
				if !r.Attrs.IsControl() {
					ts := r.Timestamp.UnixMilli()
					record := connectstate.Record{Key: r.Key, Value: r.Value, Offset: r.Offset, Partition: r.Partition, Timestamp: &ts}
					if _, err := m.HandleRecord(record); err != nil {
						return err
					}
					for {
						if _, ok, err := m.PollEvent(); err != nil || !ok {
							break
						}
					}
				}
				if r.Offset+1 >= end {
					delete(remaining, r.Partition)
				}
			}
		}
	}
	return m.MarkCaughtUp()
}

// Connector is one connector as a worker holds it.
type Connector struct {
	Name        string
	TargetState string
	Tasks       int
	Class       string
}

// Connectors lists the connectors of a config snapshot (the JSON contract), by name.
func Connectors(snapshot []byte) ([]Connector, error) {
	var s struct {
		Connectors   []string                  `json:"connectors"`
		Configs      map[string]map[string]any `json:"connector_configs"`
		TargetStates map[string]string         `json:"target_states"`
		TaskCounts   map[string]int            `json:"connector_task_counts"`
	}
	if err := json.Unmarshal(snapshot, &s); err != nil {
		return nil, err
	}
	out := make([]Connector, 0, len(s.Connectors))
	for _, name := range s.Connectors {
		state, ok := s.TargetStates[name]
		if !ok {
			state = "STARTED"
		}
		class, _ := s.Configs[name]["connector.class"].(string)
		out = append(out, Connector{name, state, s.TaskCounts[name], class})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func main() {
	bootstrap := flag.String("bootstrap", "localhost:9092", "the Kafka bootstrap servers")
	topic := flag.String("topic", "connect-configs", "the config topic (config.storage.topic)")
	timeout := flag.Duration("timeout", 60*time.Second, "how long the read may take")
	flag.Parse()
	if err := run(*bootstrap, *topic, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "connectors:", err)
		os.Exit(1)
	}
}

func run(bootstrap, topic string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	m, err := connectstate.NewConfigLog()
	if err != nil {
		return err
	}
	defer m.Close()
	if err := ReadTopic(ctx, []string{bootstrap}, topic, m); err != nil {
		return err
	}
	snapshot, err := m.Snapshot()
	if err != nil {
		return err
	}
	connectors, err := Connectors(snapshot)
	if err != nil {
		return err
	}
	for _, c := range connectors {
		fmt.Printf("%s: target %s, %d task(s), %s\n", c.Name, c.TargetState, c.Tasks, c.Class)
	}
	return nil
}
