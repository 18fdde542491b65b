/// Settings of a store.
#[derive(Debug, Clone)]
pub struct Config {
    pub capacity: usize,
}

impl Config {
    pub fn default_config() -> Self {
        Self::with_capacity(16)
    }

    fn with_capacity(capacity: usize) -> Self {
        Config { capacity }
    }
}
