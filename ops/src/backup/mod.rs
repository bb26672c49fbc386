//! Backup, restore and migration of a Connect cluster's state, without a worker on either side.
//!
//! * [`document`]: the backup document (JSON Lines with a header, a line per connector followed
//!   by its source partitions, and an end line with counts and a SHA-256 checksum), written and
//!   read one line at a time.
//! * [`take`]: a backup of a read state (`connect-state backup`).
//! * [`restore`]: verifying a backup, planning its restore against the target's state, and the
//!   write steps (`connect-state restore`).

pub mod document;
pub mod restore;
pub mod take;
