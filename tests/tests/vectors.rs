//! The JSON conformance vectors, run through the library.

use connect_state_tests::load_vectors;

#[test]
fn every_vector_matches_through_the_library() {
    let vectors = load_vectors();
    assert!(vectors.len() >= 5, "the vectors are missing");
    for (name, vector) in vectors {
        let actual = vector.run_library();
        assert_eq!(
            actual,
            vector.expected,
            "{name}: {}\nactual: {}",
            vector.description,
            serde_json::to_string_pretty(&actual).unwrap()
        );
    }
}
