package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	connectstate "example.invalid/connect-state/bindings/go"
)

// cluster is the local cluster of scripts/local-cluster, from CONNECT_STATE_TEST_CLUSTER.
type cluster struct {
	bootstrap, connect, configTopic string
}

func localCluster(t *testing.T) cluster {
	path := os.Getenv("CONNECT_STATE_TEST_CLUSTER")
	if path == "" {
		t.Skip("skipped: needs the local cluster, set CONNECT_STATE_TEST_CLUSTER (see .ci/run)")
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	settings := map[string]string{}
	for lines := bufio.NewScanner(file); lines.Scan(); {
		if name, value, ok := strings.Cut(lines.Text(), "="); ok {
			if _, seen := settings[name]; !seen {
				settings[name] = value
			}
		}
	}
	return cluster{settings["bootstrap"], settings["connect"], settings["config.storage.topic"]}
}

func (c cluster) rest(t *testing.T, method, path string, body any, answer any) int {
	t.Helper()
	var data bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&data).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	request, err := http.NewRequest(method, c.connect+path, &data)
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Content-Type", "application/json")
	response, err := (&http.Client{Timeout: 30 * time.Second}).Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if answer != nil && response.StatusCode == http.StatusOK {
		if err := json.NewDecoder(response.Body).Decode(answer); err != nil {
			t.Fatal(err)
		}
	}
	return response.StatusCode
}

// connectors reads the config topic with franz-go, as the command does.
func (c cluster) connectors(t *testing.T) []Connector {
	t.Helper()
	m, err := connectstate.NewConfigLog()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := ReadTopic(ctx, []string{c.bootstrap}, c.configTopic, m); err != nil {
		t.Fatal(err)
	}
	snapshot, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	connectors, err := Connectors(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return connectors
}

// eventually runs check until it returns "" or a minute has passed.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		failure := check()
		if failure == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, failure)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// What the example prints from the config topic is what Java's REST API answers: the
// connectors, each one's task count, class and target state, through a pause and a delete.
func TestTheConnectorsAreJavas(t *testing.T) {
	c := localCluster(t)
	name := fmt.Sprintf("go-src-%d-%d", os.Getpid(), time.Now().Unix())
	config := map[string]string{
		"connector.class": "FileStreamSource",
		"file":            t.TempDir() + "/lines.txt",
		"topic":           name + "-lines",
		"tasks.max":       "1",
	}
	if code := c.rest(t, "PUT", "/connectors/"+name+"/config", config, nil); code != 201 && code != 200 {
		t.Fatalf("creating %s: HTTP %d", name, code)
	}
	defer c.rest(t, "DELETE", "/connectors/"+name, nil, nil)

	agrees := func(state string) func() string {
		return func() string {
			var names []string
			if code := c.rest(t, "GET", "/connectors", nil, &names); code != 200 {
				return fmt.Sprintf("GET /connectors: HTTP %d", code)
			}
			var tasks []any
			if code := c.rest(t, "GET", "/connectors/"+name+"/tasks", nil, &tasks); code != 200 {
				return fmt.Sprintf("GET tasks: HTTP %d", code)
			}
			ours := c.connectors(t)
			var ourNames []string
			var mine *Connector
			for i := range ours {
				ourNames = append(ourNames, ours[i].Name)
				if ours[i].Name == name {
					mine = &ours[i]
				}
			}
			if !sameSet(ourNames, names) {
				return fmt.Sprintf("ours %v, Java's %v", ourNames, names)
			}
			want := Connector{name, state, len(tasks), "FileStreamSource"}
			if mine == nil || *mine != want || len(tasks) == 0 {
				return fmt.Sprintf("ours %+v, Java's %+v", mine, want)
			}
			return ""
		}
	}
	eventually(t, "created", agrees("STARTED"))
	if code := c.rest(t, "PUT", "/connectors/"+name+"/pause", nil, nil); code != 202 {
		t.Fatalf("pause: HTTP %d", code)
	}
	eventually(t, "paused", agrees("PAUSED"))
	if code := c.rest(t, "DELETE", "/connectors/"+name, nil, nil); code != 204 {
		t.Fatalf("delete: HTTP %d", code)
	}
	eventually(t, "deleted", func() string {
		for _, connector := range c.connectors(t) {
			if connector.Name == name {
				return "still listed"
			}
		}
		return ""
	})
}

func sameSet(a, b []string) bool {
	as, bs := map[string]bool{}, map[string]bool{}
	for _, s := range a {
		as[s] = true
	}
	for _, s := range b {
		bs[s] = true
	}
	return len(a) == len(as) && len(b) == len(bs) && reflect.DeepEqual(as, bs)
}

// Connectors reads the contract's members; a connector without a target state record is
// STARTED, as Java's default.
func TestConnectorsReadsTheContract(t *testing.T) {
	snapshot := []byte(`{"connectors":["b","a"],"connector_configs":{"a":{"connector.class":"X"},"b":{"connector.class":"Y","n":null}},` +
		`"target_states":{"b":"STOPPED"},"connector_task_counts":{"a":2}}`)
	got, err := Connectors(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	want := []Connector{{"a", "STARTED", 2, "X"}, {"b", "STOPPED", 0, "Y"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v", got)
	}
	if _, err := Connectors([]byte("not json")); err == nil {
		t.Fatal("not JSON is an error")
	}
}
