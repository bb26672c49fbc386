//! The status topic: being written (issue #3). Nothing is exported yet.
