//! A short load check of `connect-state serve` (loopback only, bounded): the binary serves the
//! demo cluster on a free port and criterion times requests from a real HTTP client, one
//! connection reused, for the cheapest and the most expensive GET. Not a test: nothing asserts
//! a time. `cargo bench -p connect-state-cli --bench serve_load`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use criterion::{Criterion, Throughput};

/// The server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("the server prints its address");
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .expect("`listening on http://ADDR`")
        .to_string();
    (Server(child), base)
}

fn load(c: &mut Criterion) {
    let (_server, base) = start();
    let agent = ureq::Agent::new_with_defaults();
    let mut group = c.benchmark_group("serve");
    group.sample_size(30);
    group.throughput(Throughput::Elements(1));
    for path in ["/connectors", "/connectors?expand=status&expand=info"] {
        let url = format!("{base}{path}");
        group.bench_function(path, |b| {
            b.iter(|| {
                agent
                    .get(&url)
                    .call()
                    .expect("a 200 answer")
                    .body_mut()
                    .read_to_string()
                    .expect("a body")
            })
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    load(&mut criterion);
    criterion.final_summary();
}
