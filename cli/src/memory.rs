//! The binary's memory policy: its heap is not backed by transparent huge pages.
//!
//! mimalloc, the binary's allocator, asks the kernel for transparent huge pages for its arenas
//! (its `allow_thp` option, on by default), so a large state is faulted in 2 MB at a time. On
//! the development and CI machines (virtual machines, with the kernel's transparent huge pages
//! on for the regions that ask) a huge page's first touch cost several times what 512 small
//! ones did: touching 400 MB of fresh memory took 0.86-1.18 s in huge pages and 0.17-0.22 s in
//! small ones, and in a fresh process reading the default-scale offsets topic the kernel
//! clearing huge pages was 40-50% of the thread applying the records. A start-up read builds
//! its whole state in fresh memory (the offsets topic's million keys: 200 MB), so the binary
//! turns transparent huge pages off for itself before its first large allocation.
//!
//! `MIMALLOC_ALLOW_THP` set in the environment is an explicit choice and wins: then nothing is
//! changed here. Processes the binary starts inherit the setting (a JVM uses transparent huge
//! pages only when told to, and then still gets them where it asks).

use std::ffi::OsStr;

/// Whether the process turns transparent huge pages off, given `MIMALLOC_ALLOW_THP`: only
/// when it is not set.
pub fn turns_huge_pages_off(allow_thp: Option<&OsStr>) -> bool {
    allow_thp.is_none()
}

/// Applies the policy (see the module docs). Call it first in `main`. A kernel that refuses
/// leaves the pages as they were: only slower.
pub fn apply() {
    if turns_huge_pages_off(std::env::var_os("MIMALLOC_ALLOW_THP").as_deref()) {
        disable_huge_pages();
    }
}

#[cfg(target_os = "linux")]
fn disable_huge_pages() {
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

#[cfg(not(target_os = "linux"))]
fn disable_huge_pages() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_pages_are_turned_off_unless_the_allocator_is_told_otherwise() {
        assert!(turns_huge_pages_off(None));
        assert!(!turns_huge_pages_off(Some(OsStr::new("1"))));
        assert!(!turns_huge_pages_off(Some(OsStr::new("0"))));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn applying_the_policy_turns_them_off_for_the_process() {
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
            eprintln!("MIMALLOC_ALLOW_THP is set: the policy leaves the process alone");
            return;
        }
        apply();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }
}
