//! The one place that chooses the reference-counted pointer (rustls style).

pub(crate) use alloc::sync::Arc;
