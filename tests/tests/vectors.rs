//! The JSON conformance vectors, run through the library. Numbers are compared by their text
//! as the contract prints it (`-0.0` is not `0.0`), members regardless of order.

use connect_state_tests::judge_json::Json;
use connect_state_tests::load_vectors;

#[test]
fn every_vector_matches_through_the_library() {
    let vectors = load_vectors();
    assert!(vectors.len() >= 5, "the vectors are missing");
    for (name, vector) in vectors {
        let actual = vector.run_library();
        let text = |value: &serde_json::Value| {
            Json::parse(&value.to_string())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .sorted()
        };
        assert_eq!(
            text(&actual),
            text(&vector.expected),
            "{name}: {}\nactual: {}",
            vector.description,
            serde_json::to_string_pretty(&actual).unwrap()
        );
    }
}
