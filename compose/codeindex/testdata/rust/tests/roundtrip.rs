use kv_store::open;

#[test]
fn roundtrip() {
    let mut s = open();
    s.set("a", vec![1]);
}
