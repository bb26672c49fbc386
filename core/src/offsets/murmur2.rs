//! Kafka's murmur2 key partitioner.
//!
//! Java producers place a record with a non-null key on partition
//! `toPositive(murmur2(serializedKey)) % numPartitions` (`BuiltInPartitioner.partitionForKey`,
//! formerly `DefaultPartitioner`), using `org.apache.kafka.common.utils.Utils.murmur2` and
//! `Utils.toPositive`. librdkafka's `murmur2_random` partitioner computes the same partition for
//! keyed records (it only differs for null keys, which it places randomly), so records written
//! by either client land where [`default_partition`] says.
//!
//! All arithmetic wraps exactly like Java's 32-bit `int`.

/// The seed Kafka uses (`0x9747b28c`, a negative `int` in Java).
const SEED: u32 = 0x9747_b28c;
/// Mixing constant `m`.
const M: u32 = 0x5bd1_e995;
/// Mixing shift `r`.
const R: u32 = 24;

/// Kafka's `Utils.murmur2(byte[])`: the 32-bit MurmurHash2 of `data` with seed `0x9747b28c`,
/// reading 4-byte little-endian blocks and mixing the 1 to 3 trailing bytes (as unsigned
/// `data[i] & 0xff`) in the same fall-through order as Java.
///
/// The length is mixed in as a 32-bit `int`, as in Java (whose arrays cannot exceed
/// `i32::MAX` bytes); for slices of 4 GiB or more only the low 32 bits of the length count.
pub fn murmur2(data: &[u8]) -> i32 {
    // Truncation is intended: Java mixes in `data.length`, an `int`.
    let length = data.len() as u32;
    let mut h = SEED ^ length;

    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }

    // Java's `switch (length % 4)` with fall-through: case 3 mixes byte 2, then case 2 byte 1,
    // then case 1 byte 0 and multiplies.
    let tail = blocks.remainder();
    if let Some(&b) = tail.get(2) {
        h ^= u32::from(b) << 16;
    }
    if let Some(&b) = tail.get(1) {
        h ^= u32::from(b) << 8;
    }
    if let Some(&b) = tail.first() {
        h ^= u32::from(b);
        h = h.wrapping_mul(M);
    }

    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    // Reinterpret the bits as Java's signed `int`.
    h as i32
}

/// Kafka's `Utils.toPositive(int)`: clears the sign bit (`n & 0x7fffffff`). This is not the
/// absolute value: `to_positive(-1)` is `i32::MAX` and `to_positive(i32::MIN)` is `0`.
pub const fn to_positive(n: i32) -> i32 {
    n & 0x7fff_ffff
}

/// The partition Java's producer picks for a record with serialized key `key` on a topic with
/// `num_partitions` partitions: `toPositive(murmur2(key)) % numPartitions`.
///
/// Returns `None` if `num_partitions` is zero or negative (where Java would throw or produce
/// nonsense); never panics.
pub fn default_partition(key: &[u8], num_partitions: i32) -> Option<i32> {
    if num_partitions <= 0 {
        return None;
    }
    Some(to_positive(murmur2(key)) % num_partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `UtilsTest.testMurmur2` in Apache Kafka (`clients/src/test/java/org/apache/kafka/common/
    /// utils/UtilsTest.java`).
    const KAFKA_VECTORS: &[(&[u8], i32)] = &[
        (b"21", -973_932_308),
        (b"foobar", -790_332_482),
        (b"a-little-bit-long-string", -985_981_536),
        (b"a-little-bit-longer-string", -1_486_304_829),
        (
            b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
            -58_897_971,
        ),
        // Kafka writes this one as `new byte[] {'a', 'b', 'c'}`.
        (b"abc", 479_470_107),
    ];

    #[test]
    fn kafka_utils_test_vectors() {
        for &(data, expected) in KAFKA_VECTORS {
            assert_eq!(murmur2(data), expected, "{:?}", core::str::from_utf8(data));
        }
    }

    /// `unittest_murmur2` in librdkafka's `src/rdmurmur2.c` (`java_murmur2_results`), which
    /// covers every tail length and the empty key.
    #[test]
    fn librdkafka_java_vectors() {
        let cases: &[(&[u8], u32)] = &[
            (b"kafka", 0xd067_cf64),
            (b"giberish123456789", 0x8f55_2b0c),
            (b"1234", 0x9fc9_7b14),
            (b"234", 0xe7c0_09ca),
            (b"34", 0x8739_30da),
            (b"4", 0x5a4b_5ca1),
            (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x7842_4f1c),
            (b"reAmbleWillBeRemoved,ThePrePartThatIs", 0x4a62_b377),
            (b"eAmbleWillBeRemoved,ThePrePartThatIs", 0xe0e4_e09e),
            (b"AmbleWillBeRemoved,ThePrePartThatIs", 0x62b8_b43f),
            (b"", 0x106e_08d9),
        ];
        for &(data, expected) in cases {
            assert_eq!(
                murmur2(data),
                expected as i32,
                "{:?}",
                core::str::from_utf8(data)
            );
        }
    }

    /// Bytes >= 0x80 are negative Java `byte`s; Java masks them with `& 0xff`. Expected values
    /// from an independent Python transcription of `Utils.murmur2`, confirmed by running the
    /// Java method on JDK 25.
    #[test]
    fn high_bytes_are_unsigned() {
        assert_eq!(murmur2(&[0xff]), -311_467_685);
        assert_eq!(murmur2(&[0x80, 0xff, 0x00, 0xc3, 0xa9]), 9_179_965);
        assert_eq!(murmur2("é".as_bytes()), 186_971_271);
    }

    #[test]
    fn to_positive_clears_the_sign_bit() {
        assert_eq!(to_positive(0), 0);
        assert_eq!(to_positive(5), 5);
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(to_positive(i32::MAX), i32::MAX);
        assert_eq!(to_positive(-973_932_308), 1_173_551_340);
    }

    #[test]
    fn default_partition_of_kafka_vectors() {
        // (key, partition of 5, partition of 25), from `(hash & 0x7fffffff) % n` of the hashes
        // above, computed with Python.
        let cases: &[(&[u8], i32, i32)] = &[
            (b"21", 0, 15),
            (b"foobar", 1, 16),
            (b"a-little-bit-long-string", 2, 12),
            (b"a-little-bit-longer-string", 4, 19),
            (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", 2, 2),
            (b"abc", 2, 7),
        ];
        for &(key, of5, of25) in cases {
            assert_eq!(default_partition(key, 5), Some(of5));
            assert_eq!(default_partition(key, 25), Some(of25));
            assert_eq!(default_partition(key, 1), Some(0));
        }
        assert_eq!(default_partition(b"21", i32::MAX), Some(1_173_551_340));
    }

    #[test]
    fn default_partition_without_partitions_is_none() {
        assert_eq!(default_partition(b"21", 0), None);
        assert_eq!(default_partition(b"", 0), None);
        assert_eq!(default_partition(b"21", -1), None);
        assert_eq!(default_partition(b"21", i32::MIN), None);
    }
}
