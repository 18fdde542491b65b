package shapes

// archName names the architecture.
func archName() string { return "loong64" }
