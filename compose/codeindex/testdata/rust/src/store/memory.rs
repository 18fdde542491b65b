use std::collections::HashMap;

use super::Backend;

/// An in-memory backend.
pub struct Memory {
    map: HashMap<String, Vec<u8>>,
}

impl Memory {
    pub fn new(capacity: usize) -> Memory {
        Memory { map: HashMap::with_capacity(capacity) }
    }
}

impl Backend for Memory {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.map.get(key).cloned()
    }

    fn put(&mut self, key: &str, value: Vec<u8>) {
        self.map.insert(key.to_string(), value);
    }
}
