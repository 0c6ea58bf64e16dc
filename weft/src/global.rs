//! The global pool that free functions use outside any pool: built lazily with
//! default settings, or once explicitly with [`Builder::build_global`](crate::Builder::build_global).

use std::sync::OnceLock;

use crate::builder::{BuildError, Builder};
use crate::pool::Pool;

static GLOBAL: OnceLock<Pool> = OnceLock::new();

/// Builds the global pool from `builder`, unless it exists already.
pub(crate) fn install_builder(builder: Builder) -> Result<(), BuildError> {
    if GLOBAL.get().is_some() {
        return Err(BuildError::GlobalAlreadyInitialized);
    }
    let pool = builder.build()?;
    // Lost a race with another `build_global` or a lazy first use: the pool we
    // built is dropped (its workers joined) and the caller told.
    GLOBAL
        .set(pool)
        .map_err(|_| BuildError::GlobalAlreadyInitialized)
}

/// The global pool, built with defaults on first use.
///
/// # Panics
/// If the default pool cannot be built (for example `WEFT_WORKERS=0`).
pub(crate) fn pool() -> &'static Pool {
    GLOBAL.get_or_init(|| {
        Builder::new()
            .build()
            .unwrap_or_else(|error| panic!("weft: cannot build the global pool: {error}"))
    })
}

/// Runs `op` in the global pool and waits.
pub(crate) fn install<OP, R>(op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    pool().install(op)
}
