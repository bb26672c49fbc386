//! What a hostile tester broke (issue 14), each case checked through the binary: secrets in
//! error text, forged task counts, stalled clients, garbage dumps, numbers that do not fit,
//! terminal control characters, odd requests.

mod common;

use std::process::{Command, Output, Stdio};

use common::Server;
use serde_json::{json, Value};

fn connect_state(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Item 1: librdkafka's error text echoes property values; no secret's value reaches the
/// output of any command that takes `-X`, whichever error path it takes (clients refused at
/// creation, or an unreachable broker).
#[test]
fn secret_property_values_never_reach_the_output() {
    // librdkafka refuses some of these at client creation (and echoes the value), takes the
    // others and then fails to reach the broker.
    let refused = [
        "sasl.jaas.config",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.config",
        "some.credentials",
        "ssl.key.pem",
    ];
    let accepted = [
        "ssl.key.password",
        "ssl.keystore.password",
        "sasl.password",
        "ssl.certificate.pem",
    ];
    let setting = |i: usize, property: &str| format!("{property}=Sup3rS3cret-{i}-value");
    let commands: [&[&str]; 6] = [
        &["inspect", "--config-topic", "c", "--timeout", "1"],
        &["doctor", "--config-topic", "c", "--timeout", "1"],
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config-topic",
            "c",
            "--timeout",
            "1",
        ],
        &[
            "offsets",
            "export",
            "--connector",
            "x",
            "--config-topic",
            "c",
            "--offsets-topic",
            "o",
            "--timeout",
            "1",
        ],
        &[
            "offsets",
            "reset",
            "--connector",
            "x",
            "--config-topic",
            "c",
            "--offsets-topic",
            "o",
            "--timeout",
            "1",
        ],
        &["bench", "--scale", "tiny"],
    ];
    for command in commands {
        let groups: Vec<&[&str]> = if command[0] == "bench" {
            // bench reaches the broker only after its 30 s request timeout: the refused
            // clients' path only.
            vec![&refused]
        } else {
            vec![&refused, &accepted]
        };
        for group in groups {
            let settings: Vec<String> = group
                .iter()
                .enumerate()
                .map(|(i, p)| setting(i, p))
                .collect();
            let mut args: Vec<&str> = command.to_vec();
            args.extend(["--bootstrap-servers", "127.0.0.1:1"]);
            for s in &settings {
                args.extend(["-X", s.as_str()]);
            }
            let out = connect_state(&args);
            let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert_eq!(out.status.code(), Some(2), "{args:?}: {all}");
            assert!(
                !all.contains("Sup3rS3cret"),
                "{args:?} printed a secret: {all}"
            );
        }
    }
    // Given by mistake without -X, the argument is still not echoed.
    let out = connect_state(&["inspect", "sasl.password=Sup3rS3cret-bare"]);
    assert!(
        !text(&out.stderr).contains("Sup3rS3cret"),
        "{}",
        text(&out.stderr)
    );
}

/// A config dump whose connector `a` has a commit claiming 2,147,483,647 tasks (and none
/// written).
fn forged_task_count() -> std::path::PathBuf {
    common::dump(
        "forged.jsonl",
        &[
            (0, "connector-a", Some(json!({"properties": {"name": "a"}}))),
            (0, "commit-a", Some(json!({"tasks": i32::MAX}))),
        ],
    )
}

/// Item 2: a forged task count once made `GET /connectors/a/tasks` allocate 64 GiB and abort
/// `serve`. Every answer lists at most `MAX_LISTED_TASKS` tasks and says what it left out; the
/// tables say the count without listing it.
#[test]
fn a_forged_task_count_keeps_answers_and_tables_bounded() {
    let config = forged_task_count();
    let server = Server::start(&common::from_dumps(&[("config", &config)]));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get(format!("{}/connectors/a/tasks", server.base))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let truncated = response
        .headers()
        .get("x-connect-state-truncated")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        truncated.as_deref(),
        Some("10000 of 2147483647 tasks listed")
    );
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    let tasks = body.as_array().unwrap();
    assert_eq!(tasks.len(), engine::config::MAX_LISTED_TASKS as usize);
    assert_eq!(
        tasks[9999],
        json!({"id": {"connector": "a", "task": 9999}, "config": null})
    );
    // The server still answers afterwards.
    let (status, names) = server.get("/connectors");
    assert_eq!((status, names), (200, json!(["a"])));
    assert!(server.stop().success());

    for args in [
        vec!["replay", "--topic", "config"],
        vec!["replay", "--topic", "config", "--format", "json"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args.push(config.display().to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = connect_state(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(
            out.stdout.len() < 4096,
            "{args:?}: {} bytes",
            out.stdout.len()
        );
        assert!(text(&out.stdout).contains("2147483647"), "{args:?}");
    }
    let dump = format!("config={}", config.display());
    let out = connect_state(&["doctor", "--from-dump", &dump]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.len() < 4096, "{} bytes", out.stdout.len());
    assert!(text(&out.stdout).contains("announced 2147483647 task(s)"));
}
