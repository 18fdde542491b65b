//! A key-value store. It keeps bytes.

pub mod store;
mod config;

pub use store::Store;
use serde::Serialize;

/// Open a store with the default configuration.
pub fn open() -> Store {
    let c = config::Config::default_config();
    Store::with_config(c)
}
