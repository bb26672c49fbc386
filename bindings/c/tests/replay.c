/*
 * A C host of connect-state's C ABI, for the tests (bindings/c/tests/check.py).
 *
 *   replay TOPIC < RECORDS    TOPIC: 0 config, 1 status, 2 offsets. Each line of RECORDS is
 *                             "PARTITION OFFSET KEY VALUE TIMESTAMP" (KEY and VALUE in hex, "-"
 *                             for null; TIMESTAMP "-" when unknown) or "LIVE" (mark caught up).
 *                             Prints one line per event, then "SNAPSHOT <json>", then, after a
 *                             checkpoint and a restore, "RESTORED <json>".
 *   replay --hostile          calls the ABI with hostile arguments and checks each status code.
 *
 * Exits 0 when everything went as expected, 1 otherwise (with a message on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect_state.h"

static int failures = 0;

static void expect(int ok, const char *what) {
    if (!ok) {
        const char *why = cs_last_error();
        fprintf(stderr, "FAILED: %s (last error: %s)\n", what, why ? why : "none");
        failures++;
    }
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes hex into a fresh buffer; "-" is NULL with length 0. */
static uint8_t *unhex(const char *text, size_t *len) {
    *len = 0;
    if (strcmp(text, "-") == 0) return NULL;
    size_t n = strlen(text) / 2;
    uint8_t *out = malloc(n + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(out);
            fprintf(stderr, "bad hex: %s\n", text);
            exit(1);
        }
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    *len = n;
    return out;
}

static void print_bytes(const char *label, cs_bytes bytes) {
    printf("%s%.*s\n", label, (int)bytes.len, (const char *)bytes.data);
}

static void drain_events(cs_machine *machine) {
    cs_bytes event;
    cs_status status;
    while ((status = cs_poll_event(machine, &event)) == CS_OK) {
        print_bytes("EVENT ", event);
        cs_bytes_free(event);
    }
    expect(status == CS_NO_EVENT, "poll_event ends with CS_NO_EVENT");
}

static int replay(unsigned topic) {
    cs_machine *machine = NULL;
    expect(cs_machine_new(topic, &machine) == CS_OK && machine, "cs_machine_new");
    if (!machine) return 1;
    /* Lines can be long: a value of 20 MB is 40 MB of hex. */
    size_t capacity = 1 << 16;
    char *line = malloc(capacity);
    size_t used = 0;
    int c;
    for (;;) {
        used = 0;
        while ((c = getchar()) != EOF && c != '\n') {
            if (used + 1 >= capacity) {
                capacity *= 2;
                line = realloc(line, capacity);
            }
            line[used++] = (char)c;
        }
        line[used] = '\0';
        if (used == 0 && c == EOF) break;
        if (strcmp(line, "LIVE") == 0) {
            expect(cs_mark_caught_up(machine) == CS_OK, "cs_mark_caught_up");
            continue;
        }
        char *fields[5];
        char *rest = line;
        for (int i = 0; i < 5; i++) {
            fields[i] = strsep(&rest, " ");
            if (!fields[i]) {
                fprintf(stderr, "a record line needs five fields: %s\n", line);
                return 1;
            }
        }
        size_t key_len, value_len;
        uint8_t *key = unhex(fields[2], &key_len);
        uint8_t *value = unhex(fields[3], &value_len);
        int64_t timestamp = strcmp(fields[4], "-") == 0 ? 0 : strtoll(fields[4], NULL, 10);
        cs_outcome outcome;
        cs_status status = cs_handle_record(machine, key, key_len, value, value_len,
                                            strtoll(fields[1], NULL, 10), (int32_t)atoi(fields[0]),
                                            strcmp(fields[4], "-") == 0 ? NULL : &timestamp, &outcome);
        expect(status == CS_OK, "cs_handle_record");
        free(key);
        free(value);
        drain_events(machine);
        if (c == EOF) break;
    }
    free(line);
    cs_bytes snapshot;
    expect(cs_snapshot_json(machine, &snapshot) == CS_OK, "cs_snapshot_json");
    print_bytes("SNAPSHOT ", snapshot);
    cs_bytes_free(snapshot);
    cs_bytes diagnostics;
    expect(cs_diagnostics_json(machine, &diagnostics) == CS_OK, "cs_diagnostics_json");
    cs_bytes_free(diagnostics);
    cs_bytes checkpoint;
    expect(cs_checkpoint(machine, &checkpoint) == CS_OK, "cs_checkpoint");
    cs_machine *restored = NULL;
    expect(cs_restore(topic, checkpoint.data, checkpoint.len, &restored) == CS_OK && restored,
           "cs_restore");
    cs_bytes_free(checkpoint);
    if (restored) {
        cs_bytes again;
        expect(cs_snapshot_json(restored, &again) == CS_OK, "cs_snapshot_json of the restored");
        print_bytes("RESTORED ", again);
        cs_bytes_free(again);
        cs_machine_free(restored);
    }
    cs_machine_free(machine);
    return failures ? 1 : 0;
}

/* Each hostile call gets its error code, and the machine keeps working. */
static int hostile(void) {
    cs_machine *machine = NULL;
    expect(cs_machine_new(7, &machine) == CS_ERR_INVALID_ARGUMENT, "an unknown topic");
    expect(cs_last_error() != NULL, "an error has a message");
    expect(cs_machine_new(0, NULL) == CS_ERR_NULL_POINTER, "a null output pointer");
    expect(cs_machine_new(0, &machine) == CS_OK, "a config machine");
    const uint8_t key[] = "connector-a";
    const uint8_t value[] = "{\"properties\":{\"connector.class\":\"S\"}}";
    expect(cs_handle_record(NULL, key, 11, value, sizeof value - 1, 0, 0, NULL, NULL) ==
               CS_ERR_NULL_POINTER,
           "a null machine");
    expect(cs_handle_record(machine, NULL, 5, value, sizeof value - 1, 0, 0, NULL, NULL) ==
               CS_ERR_NULL_POINTER,
           "a null key with a length");
    expect(cs_handle_record(machine, key, SIZE_MAX, value, 1, 0, 0, NULL, NULL) ==
               CS_ERR_INVALID_ARGUMENT,
           "a length that overflows");
    expect(cs_handle_record(machine, key, 11, value, sizeof value - 1, -1, 0, NULL, NULL) ==
               CS_ERR_RECORD,
           "a negative offset");
    expect(cs_handle_record(machine, key, 11, value, sizeof value - 1, 0, -3, NULL, NULL) ==
               CS_ERR_RECORD,
           "a negative partition");
    cs_outcome outcome = CS_APPLIED;
    const uint8_t not_utf8[] = {0xff, 0xfe, 0x00};
    expect(cs_handle_record(machine, key, 11, not_utf8, 3, 0, 0, NULL, &outcome) == CS_OK &&
               outcome == CS_SKIPPED && cs_last_error() != NULL,
           "a value that is not UTF-8 is skipped, with its reason");
    expect(cs_handle_record(machine, not_utf8, 2, value, sizeof value - 1, 1, 0, NULL, &outcome) ==
               CS_OK && outcome == CS_SKIPPED,
           "a key that is not UTF-8 is skipped");
    expect(cs_handle_record(machine, key, 11, value, sizeof value - 1, 2, 0, NULL, &outcome) ==
               CS_OK && outcome == CS_APPLIED && cs_last_error() == NULL,
           "a good record after the bad ones is applied");
    cs_bytes out;
    expect(cs_poll_event(machine, NULL) == CS_ERR_NULL_POINTER, "poll into null");
    expect(cs_snapshot_json(NULL, &out) == CS_ERR_NULL_POINTER, "snapshot of null");
    cs_machine *restored = NULL;
    const uint8_t garbage[] = "not a checkpoint";
    expect(cs_restore(0, garbage, sizeof garbage, &restored) == CS_ERR_CHECKPOINT && !restored,
           "a corrupt checkpoint");
    expect(cs_restore(0, NULL, 3, &restored) == CS_ERR_NULL_POINTER, "a null checkpoint");
    expect(cs_checkpoint(machine, &out) == CS_OK, "a checkpoint");
    expect(cs_restore(1, out.data, out.len, &restored) == CS_ERR_CHECKPOINT,
           "a config checkpoint is not a status machine");
    expect(cs_restore(0, out.data, out.len / 2, &restored) == CS_ERR_CHECKPOINT,
           "a truncated checkpoint");
    cs_bytes_free(out);
    cs_bytes empty = {NULL, 0};
    cs_bytes_free(empty);
    cs_machine_free(NULL);
    cs_machine_free(machine);
    if (failures == 0) printf("hostile: every call got its status code\n");
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--hostile") == 0) return hostile();
    if (argc == 2 && strcmp(argv[1], "--contract-version") == 0) {
        printf("%u\n", (unsigned)cs_contract_version());
        return 0;
    }
    if (argc == 2) return replay((unsigned)atoi(argv[1]));
    fprintf(stderr, "usage: replay TOPIC < RECORDS | replay --hostile | replay --contract-version\n");
    return 2;
}
