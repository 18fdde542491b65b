mod memory;

use crate::config::Config;
pub use memory::Memory;

/// Where values live.
pub trait Backend {
    /// Read a value.
    fn get(&self, key: &str) -> Option<Vec<u8>>;
    fn put(&mut self, key: &str, value: Vec<u8>);
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

pub struct Store {
    backend: Memory,
}

impl Store {
    pub fn with_config(c: Config) -> Store {
        Store { backend: Memory::new(c.capacity) }
    }

    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        util::check_key(key);
        self.backend.get(key)
    }

    pub fn set(&mut self, key: &str, value: Vec<u8>) {
        self.validate(key);
        self.backend.put(key, value);
    }

    fn validate(&self, key: &str) {
        assert!(!is_reserved(key));
    }
}

fn is_reserved(key: &str) -> bool {
    key.starts_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper() -> Store {
        crate::open()
    }

    #[test]
    fn test_is_reserved() {
        assert!(is_reserved("__x"));
        helper();
    }
}
