/// Check a key. Panics on an empty one.
pub fn check_key(key: &str) {
    if key.is_empty() {
        panic!("empty key");
    }
}
