// Package connectstate embeds connect-state's core in Go: machines of Kafka Connect's three
// internal topics (config, status, offsets) that take records from the caller's own Kafka
// client and answer with the state a Java worker would hold, as JSON text in the contract of
// `connect-state replay --format json`.
//
// It is a thin cgo adapter over the C ABI (bindings/c). Build the library first:
//
//	cargo build --release -p connect-state-c
//
// A Machine is not safe for concurrent use; distinct machines are independent.
package connectstate

/*
#cgo CFLAGS: -I${SRCDIR}/../c/include
#cgo LDFLAGS: ${SRCDIR}/../../target/release/libconnect_state_c.a -ldl -lm -lpthread
#include <stdlib.h>
#include "connect_state.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Topic names one of Connect's internal topics.
type Topic uint32

const (
	// Config is the config topic (config.storage.topic).
	Config Topic = C.CS_TOPIC_CONFIG
	// Status is the status topic (status.storage.topic).
	Status Topic = C.CS_TOPIC_STATUS
	// Offsets is the offsets topic (offset.storage.topic).
	Offsets Topic = C.CS_TOPIC_OFFSETS
)

// Error is a call the core refused: its status code and message.
type Error struct {
	// Status is the C ABI's status code (CS_ERR_...).
	Status int
	// Message says why.
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("connect-state: %s (status %d)", e.Message, e.Status)
}

// ContractVersion is the version of the JSON contract the snapshots, events and diagnostics
// are written in. Within a version members are only added (ignore those you do not know); a
// member removed, renamed or given another meaning makes a new version.
func ContractVersion() uint32 { return uint32(C.cs_contract_version()) }

// Record is one record of a topic. A nil Key is a record without key; a nil Value is a
// tombstone (an empty, non-nil slice is an empty value).
type Record struct {
	Key       []byte
	Value     []byte
	Offset    int64
	Partition int32
	// Timestamp is the record's timestamp in milliseconds, nil when unknown.
	Timestamp *int64
}

// Machine reads one topic. Close it when done.
type Machine struct {
	ptr *C.cs_machine
}

// call runs a C call and its error message on one OS thread (the message is per thread).
func call(f func() uint32) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.CS_OK || status == C.CS_NO_EVENT {
		return nil
	}
	message := "unknown error"
	if text := C.cs_last_error(); text != nil {
		message = C.GoString(text)
	}
	return &Error{Status: int(status), Message: message}
}

// NewMachine creates a machine for topic, reading its start-up catch-up: no events until
// MarkCaughtUp.
func NewMachine(topic Topic) (*Machine, error) {
	m := &Machine{}
	if err := call(func() uint32 { return C.cs_machine_new(C.uint32_t(topic), &m.ptr) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(m, (*Machine).Close)
	return m, nil
}

// NewConfigLog creates a machine for the config topic.
func NewConfigLog() (*Machine, error) { return NewMachine(Config) }

// NewStatusLog creates a machine for the status topic.
func NewStatusLog() (*Machine, error) { return NewMachine(Status) }

// NewOffsetLog creates a machine for the offsets topic.
func NewOffsetLog() (*Machine, error) { return NewMachine(Offsets) }

// Close frees the machine; it must not be used again.
func (m *Machine) Close() {
	if m.ptr != nil {
		C.cs_machine_free(m.ptr)
		m.ptr = nil
	}
	runtime.SetFinalizer(m, nil)
}

// cBytes points C at b: a nil slice is a null pointer, an empty one a non-null pointer.
func cBytes(b []byte) (*C.uint8_t, C.size_t) {
	if b == nil {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b))), C.size_t(len(b))
}

// HandleRecord applies one record. It reports whether the record was applied (false: skipped
// as Java skips it, counted in the diagnostics). Drain PollEvent after each call.
func (m *Machine) HandleRecord(r Record) (applied bool, err error) {
	var outcome uint32
	key, keyLen := cBytes(r.Key)
	value, valueLen := cBytes(r.Value)
	var ts *C.int64_t
	if r.Timestamp != nil {
		t := C.int64_t(*r.Timestamp)
		ts = &t
	}
	err = call(func() uint32 {
		return C.cs_handle_record(m.ptr, key, keyLen, value, valueLen, C.int64_t(r.Offset),
			C.int32_t(r.Partition), ts, &outcome)
	})
	runtime.KeepAlive(r.Key)
	runtime.KeepAlive(r.Value)
	return err == nil && outcome == C.CS_APPLIED, err
}

// MarkCaughtUp ends the start-up read: from now on records produce events.
func (m *Machine) MarkCaughtUp() error {
	return call(func() uint32 { return C.cs_mark_caught_up(m.ptr) })
}

// take copies bytes the library handed out and frees them.
func take(b C.cs_bytes) []byte {
	defer C.cs_bytes_free(b)
	if b.len == 0 {
		return []byte{}
	}
	// A copy through unsafe.Slice, not C.GoBytes, whose length is a C int (2 GiB at most).
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(b.data)), int(b.len))...)
}

// PollEvent returns the next event as JSON text, or ok=false when none is waiting.
func (m *Machine) PollEvent() (event []byte, ok bool, err error) {
	var out C.cs_bytes
	var status uint32
	err = call(func() uint32 { status = C.cs_poll_event(m.ptr, &out); return status })
	if err != nil || status == C.CS_NO_EVENT {
		return nil, false, err
	}
	return take(out), true, nil
}

func (m *Machine) render(f func(*C.cs_machine, *C.cs_bytes) uint32) ([]byte, error) {
	var out C.cs_bytes
	if err := call(func() uint32 { return f(m.ptr, &out) }); err != nil {
		return nil, err
	}
	return take(out), nil
}

// Snapshot returns the state as JSON text, in the contract of `connect-state replay --format
// json`.
func (m *Machine) Snapshot() ([]byte, error) {
	return m.render(func(p *C.cs_machine, out *C.cs_bytes) uint32 { return C.cs_snapshot_json(p, out) })
}

// Diagnostics returns what Java does not keep (skip counters and per topic findings) as JSON.
func (m *Machine) Diagnostics() ([]byte, error) {
	return m.render(func(p *C.cs_machine, out *C.cs_bytes) uint32 { return C.cs_diagnostics_json(p, out) })
}

// Checkpoint returns the whole machine as bytes for Restore.
func (m *Machine) Checkpoint() ([]byte, error) {
	return m.render(func(p *C.cs_machine, out *C.cs_bytes) uint32 { return C.cs_checkpoint(p, out) })
}

// Restore creates a machine of topic from Checkpoint bytes; it is not caught up (read the
// tail, then MarkCaughtUp). Corrupt, truncated or foreign bytes are an error.
func Restore(topic Topic, checkpoint []byte) (*Machine, error) {
	m := &Machine{}
	data, length := cBytes(checkpoint)
	if data == nil {
		empty := []byte{}
		data, length = cBytes(empty)
	}
	err := call(func() uint32 { return C.cs_restore(C.uint32_t(topic), data, length, &m.ptr) })
	runtime.KeepAlive(checkpoint)
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(m, (*Machine).Close)
	return m, nil
}
