//! `serve`'s dashboard pages and `/metrics` scrapes are rendered from one published value: taken
//! while records keep arriving, a page's counts match the views it shows, the views are the
//! records below the positions in its header (checked against the log itself), a scrape of the
//! same value says the same, and records that arrive after the value was published change
//! neither.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use connect_state_cli::metrics::{self, Settings};
use connect_state_cli::ui::{self, Paging};
use connect_state_memory::{MemoryCluster, MemoryTransport};
use connect_state_ops::tail::{Published, Tail, TailTopics};
use connect_state_store::{ConfigStore, ProduceMode, Store, StoreSettings, TopicKind, Transport};
use connect_state_tests::sim::runtime;
use engine::config::{write, ConfigLog};
use engine::offsets::default_partition;
use engine::status::StatusLog;
use engine::ProducerRecord;

const STATUS_PARTITIONS: i32 = 5;
const STATES: [&str; 4] = ["RUNNING", "PAUSED", "FAILED", "UNASSIGNED"];

/// Task `task` of `c` reporting `state`, on the partition Java's partitioner picks.
fn task_status(c: &str, task: i32, state: &str, generation: i64) -> ProducerRecord {
    let key = format!("status-task-{c}-{task}").into_bytes();
    let value = format!(
        r#"{{"state":"{state}","trace":null,"worker_id":"w{task}:8083","generation":{generation}}}"#
    );
    ProducerRecord {
        partition: default_partition(&key, STATUS_PARTITIONS),
        key,
        value: Some(value.into_bytes()),
    }
}

/// The `data-topic`/`data-next` pairs of a page's header.
fn header_positions(page: &str) -> BTreeMap<String, i64> {
    let mut positions = BTreeMap::new();
    for part in page.split("data-topic=\"").skip(1) {
        let (topic, rest) = part.split_once('"').expect("a closed attribute");
        let next = rest
            .split_once("data-next=\"")
            .and_then(|(_, r)| r.split_once('"'))
            .map(|(n, _)| n.parse::<i64>().expect("a number"))
            .expect("data-next beside data-topic");
        positions.insert(topic.to_owned(), next);
    }
    positions
}

/// The value of the series `name` whose labels include all of `labels`, added up.
fn metric(scrape: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .map(|l| {
            let value = l.rsplit(' ').next().expect("a value");
            value.parse::<f64>().expect("a number")
        })
        .sum()
}

/// The state each task key's last record below `positions` gives, straight from the log.
fn states_in_log(
    cluster: &Arc<Mutex<MemoryCluster>>,
    positions: &BTreeMap<i32, i64>,
) -> BTreeMap<String, String> {
    let cluster = cluster.lock().expect("not poisoned");
    let mut states = BTreeMap::new();
    for partition in 0..STATUS_PARTITIONS {
        let next = positions.get(&partition).copied().unwrap_or(0);
        for r in cluster.records("st", partition).expect("the status topic") {
            if r.offset >= next {
                continue;
            }
            let (Some(key), Some(value)) = (r.key, r.value) else {
                continue;
            };
            let value: serde_json::Value = serde_json::from_slice(&value).expect("JSON");
            states.insert(
                String::from_utf8(key).expect("UTF-8"),
                value["state"].as_str().expect("a state").to_owned(),
            );
        }
    }
    states
}

/// Everything one page and one scrape of `published` must agree on.
fn check_page_and_scrape(published: &Published, cluster: &Arc<Mutex<MemoryCluster>>) {
    let paging = Paging {
        page: 1,
        filter: None,
    };
    let page = ui::overview(published, &paging);
    let scrape = metrics::render(
        published,
        Settings {
            max_connectors: 100,
        },
        0,
    );
    let views = &published.views;

    // The header names the positions the value was read at, as the scrape does.
    let header = header_positions(&page);
    for (kind, partitions) in &published.positions {
        assert_eq!(
            header.get(kind.name()),
            Some(&partitions.values().sum::<i64>()),
            "{kind} in the header"
        );
        for (partition, next) in partitions {
            let series = metric(
                &scrape,
                "connect_state_topic_next_offset",
                &[
                    ("topic", kind.name()),
                    ("partition", &partition.to_string()),
                ],
            );
            assert_eq!(series, *next as f64, "{kind} {partition} in the scrape");
        }
    }

    // The views are exactly the log below those positions.
    let in_log = states_in_log(cluster, &published.positions[&TopicKind::Status]);
    let connectors: Vec<&str> = views.config.connectors().collect();
    for c in &connectors {
        for task in views.config.tasks(c).map(|id| id.task) {
            let key = format!("status-task-{c}-{task}");
            let shown = views.status.task(c, task).map(|s| s.state.as_str());
            assert_eq!(shown, in_log.get(&key).map(String::as_str), "{key}");
        }
    }

    // The page's counts are the views' and the scrape's.
    let count = connectors.len();
    assert!(
        page.contains(&format!("<h1>{count} connectors</h1>")),
        "the page counts {count} connectors"
    );
    assert_eq!(
        metric(&scrape, "connect_state_connectors", &[]),
        count as f64
    );
    let mut running_total = 0;
    for c in &connectors {
        let tasks = views.config.task_count(c);
        let running = views
            .config
            .tasks(c)
            .filter(|id| {
                views
                    .status
                    .task(c, id.task)
                    .is_some_and(|s| s.state.as_str() == "RUNNING")
            })
            .count();
        running_total += running;
        let row = page
            .split(&format!("data-connector=\"{c}\""))
            .nth(1)
            .and_then(|rest| rest.split("</tr>").next())
            .expect("a row per connector");
        assert!(
            row.contains(&format!("{running} of {tasks} running")),
            "{c}: {running} of {tasks} running, the row says {row}"
        );
    }
    assert_eq!(
        metric(&scrape, "connect_state_tasks", &[("state", "RUNNING")]),
        running_total as f64
    );
}

#[test]
fn a_page_and_a_scrape_taken_while_records_arrive_show_one_state() {
    runtime().block_on(async {
        let cluster = Arc::new(Mutex::new(MemoryCluster::new(7)));
        let transport: Arc<dyn Transport> = Arc::new(MemoryTransport::new(cluster.clone()));
        let mut config = ConfigStore::new(
            StoreSettings::new("cfg", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        );
        config.start().await.unwrap();
        let mut status = Store::new(
            StoreSettings::new("st", TopicKind::Status),
            transport.clone(),
            StatusLog::new(),
        );
        status.start().await.unwrap();
        let connect = || Ok(Arc::clone(&transport));
        let topics = TailTopics {
            config: "cfg".into(),
            status: Some("st".into()),
            offsets: None,
        };
        let mut tail = Tail::start(&connect, topics, 20, &|_| None).await.unwrap();

        let mut kept: Vec<(Published, String, String)> = Vec::new();
        for round in 0..8_i64 {
            // A new connector with three tasks every other round, and statuses of every task.
            if round % 2 == 0 {
                let c = format!("c{round}");
                let plan = write::put_connector_config(&c, [("tasks.max", Some("3"))], None);
                config.execute(&plan, false).await.unwrap();
                let task = [("task.class", Some("T"))];
                let plan = write::put_task_configs(&c, [task, task, task]);
                config.execute(&plan, false).await.unwrap();
            }
            let mut records = Vec::new();
            for n in 0..=round / 2 {
                for task in 0..3 {
                    let state = STATES[((round + n + i64::from(task)) % 4) as usize];
                    records.push(task_status(&format!("c{}", n * 2), task, state, round));
                }
            }
            transport
                .produce("st", &records, ProduceMode::Plain)
                .await
                .unwrap();
            let moved = tail.refresh().await.unwrap();
            let published = tail.publish(&moved);

            // More records arrive after the value is published: the page and the scrape taken
            // now still show the value, whole.
            let later: Vec<ProducerRecord> = (0..3)
                .map(|task| task_status("c0", task, "RESTARTING", 100 + round))
                .collect();
            transport
                .produce("st", &later, ProduceMode::Plain)
                .await
                .unwrap();
            check_page_and_scrape(&published, &cluster);
            let page = ui::overview(
                &published,
                &Paging {
                    page: 1,
                    filter: None,
                },
            );
            let scrape = metrics::render(
                &published,
                Settings {
                    max_connectors: 100,
                },
                0,
            );
            kept.push((published, page, scrape));
        }
        // Every value kept renders to the same page and scrape after all that arrived since.
        tail.refresh().await.unwrap();
        for (published, page, scrape) in &kept {
            let paging = Paging {
                page: 1,
                filter: None,
            };
            assert_eq!(&ui::overview(published, &paging), page);
            let settings = Settings {
                max_connectors: 100,
            };
            // The same series and values (a family lists its series in no fixed order).
            let lines = |text: &str| {
                let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
                lines.sort();
                lines
            };
            assert_eq!(
                lines(&metrics::render(published, settings, 0)),
                lines(scrape)
            );
            check_page_and_scrape(published, &cluster);
        }
    });
}
