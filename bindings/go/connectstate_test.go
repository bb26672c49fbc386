package connectstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// vector is a conformance vector of tests/vectors.
type vector struct {
	Topic    string `json:"topic"`
	LiveFrom *int64 `json:"live_from"`
	Records  []vrec `json:"records"`
}

type vrec struct {
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       *string `json:"key"`
	Payload   *string `json:"payload"`
}

var topics = map[string]Topic{"config": Config, "status": Status, "offsets": Offsets}

// exact decodes JSON keeping every number's text.
func exact(t *testing.T, text []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON (%v): %s", err, text)
	}
	return v
}

// cli is the connect-state binary the answers are compared with.
func cli(t *testing.T) string {
	if bin := os.Getenv("CONNECT_STATE_BIN"); bin != "" {
		return bin
	}
	bin, _ := filepath.Abs("../../target/debug/connect-state")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CONNECT_STATE_REQUIRE_EXTERNAL") == "1" {
			t.Fatalf("no connect-state binary at %s (CONNECT_STATE_REQUIRE_EXTERNAL=1)", bin)
		}
		t.Skipf("skipped: no connect-state binary at %s (cargo build -p connect-state-cli, or set CONNECT_STATE_BIN)", bin)
	}
	return bin
}

// Every vector through the Go package equals `connect-state replay --format json --events` on
// the same dump: the snapshot, the events, and the snapshot of a machine restored from a
// checkpoint.
func TestEveryVectorMatchesTheCLI(t *testing.T) {
	bin := cli(t)
	files, _ := filepath.Glob("../../tests/vectors/*.json")
	sort.Strings(files)
	if len(files) < 5 {
		t.Fatalf("the vectors are missing: %v", files)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		m, err := NewMachine(topics[v.Topic])
		if err != nil {
			t.Fatal(err)
		}
		var events []any
		var dump bytes.Buffer
		live := false
		for _, r := range v.Records {
			if v.LiveFrom != nil && !live && r.Offset >= *v.LiveFrom {
				if err := m.MarkCaughtUp(); err != nil {
					t.Fatal(err)
				}
				live = true
			}
			rec := Record{Offset: r.Offset, Partition: r.Partition}
			if r.Key != nil {
				rec.Key = []byte(*r.Key)
			}
			if r.Payload != nil {
				rec.Value = []byte(*r.Payload)
			}
			if _, err := m.HandleRecord(rec); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for {
				event, ok, err := m.PollEvent()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				events = append(events, exact(t, event))
			}
			line, _ := json.Marshal(map[string]any{"partition": r.Partition, "offset": r.Offset, "key": r.Key, "payload": r.Payload})
			dump.Write(append(line, '\n'))
		}
		snapshot, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		dumpFile := filepath.Join(t.TempDir(), "dump.jsonl")
		if err := os.WriteFile(dumpFile, dump.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"replay", "--topic", v.Topic, "--format", "json", "--events"}
		if v.LiveFrom != nil {
			args = append(args, "--live-from", json.Number(jsonInt(*v.LiveFrom)).String())
		}
		out, err := exec.Command(bin, append(args, dumpFile)...).Output()
		if err != nil {
			t.Fatalf("%s: the CLI failed: %v", file, err)
		}
		expected := exact(t, out).(map[string]any)
		if !reflect.DeepEqual(exact(t, snapshot), expected["snapshot"]) {
			t.Errorf("%s: the snapshot differs from the CLI's\n  go:  %s\n  cli: %s", file, snapshot, out)
		}
		if events == nil {
			events = []any{}
		}
		if !reflect.DeepEqual(events, expected["events"]) {
			t.Errorf("%s: the events differ from the CLI's", file)
		}
		checkpoint, err := m.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		restored, err := Restore(topics[v.Topic], checkpoint)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		again, _ := restored.Snapshot()
		if !bytes.Equal(again, snapshot) {
			t.Errorf("%s: the restored machine's snapshot differs", file)
		}
		restored.Close()
		m.Close()
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Refusals are errors with the C ABI's status code and the core's message; the machine keeps
// working after them.
func TestRefusalsAreErrors(t *testing.T) {
	m, err := NewConfigLog()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var refused *Error
	if _, err := m.HandleRecord(Record{Key: []byte("connector-a"), Value: []byte("{}"), Offset: -1}); !errors.As(err, &refused) || refused.Status != 4 {
		t.Fatalf("a negative offset: %v", err)
	}
	applied, err := m.HandleRecord(Record{Key: []byte("connector-a"), Value: []byte{0xff}, Offset: 0})
	if err != nil || applied {
		t.Fatalf("a value that is not UTF-8 is skipped: %v %v", applied, err)
	}
	applied, err = m.HandleRecord(Record{Key: []byte("connector-a"), Value: []byte(`{"properties":{}}`), Offset: 1})
	if err != nil || !applied {
		t.Fatalf("a good record is applied: %v %v", applied, err)
	}
	if _, err := Restore(Config, []byte("not a checkpoint")); !errors.As(err, &refused) || refused.Status != 5 {
		t.Fatalf("a corrupt checkpoint: %v", err)
	}
	if _, err := Restore(Config, nil); err == nil {
		t.Fatal("an empty checkpoint is refused")
	}
	checkpoint, _ := m.Checkpoint()
	if _, err := Restore(Status, checkpoint); err == nil {
		t.Fatal("a config checkpoint is not a status machine")
	}
	if _, err := NewMachine(Topic(9)); !errors.As(err, &refused) || refused.Status != 3 {
		t.Fatalf("an unknown topic: %v", err)
	}
	diagnostics, err := m.Diagnostics()
	if err != nil || !bytes.Contains(diagnostics, []byte(`"invalid_json":1`)) {
		t.Fatalf("diagnostics count the skip: %s %v", diagnostics, err)
	}
}

// The contract version the package reports is the one the binary names in --version.
func TestContractVersionIsTheBinarys(t *testing.T) {
	out, err := exec.Command(cli(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(JSON contract %d)", ContractVersion())
	if !strings.Contains(string(out), want) {
		t.Fatalf("%q does not name %s", out, want)
	}
}
