fn build_output() {}
