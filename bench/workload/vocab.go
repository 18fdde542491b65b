package workload

// Vocabulary of the synthetic code-architecture graph.
//
// Names are built from an index by mixed-radix decoding over these lists,
// so the lists are chosen to make every name decodable back into its
// words, which is what makes distinct indexes give distinct names, also
// under engine.NormalizeName, and even under the coarser identity rule of
// store version 2 (case folded, '_', '-' and spaces dropped):
//
//   - lists whose words are concatenated without a separator (domains,
//     verbs, nouns, objects, interface prefixes+nouns, roles, error ops)
//     are prefix-free, case-insensitively: no word is a prefix of another
//     in the same position;
//   - the last word of a name (function qualifier, error condition, role)
//     contains no digit, because a cycle number is appended when an index
//     exceeds the vocabulary's range;
//   - each node kind has its own marker: services end in "Service",
//     packages and files start with "pkg/", files end in ".go", errors
//     start with "Err", functions start with a verb, interfaces with a
//     prefix or noun that is never a verb.
//
// TestVocabularyPrefixFree and the full-size name test check these rules.

// domains name services and the second segment of package paths.
var domains = []string{
	"Payments", "Billing", "Invoicing", "Ledger", "Accounts", "Auth",
	"Identity", "Users", "Orders", "Cart", "Checkout", "Catalog",
	"Inventory", "Pricing", "Shipping", "Fulfillment", "Warehouse", "Search",
	"Recommendations", "Notifications", "Email", "Sms", "Messaging", "Chat",
	"Media", "Storage", "Uploads", "Reporting", "Analytics", "Metrics",
	"Logging", "Tracing", "Audit", "Compliance", "Fraud", "Risk", "Kyc",
	"Onboarding", "Subscriptions", "Coupons", "Loyalty", "Reviews", "Support",
	"Tickets", "Scheduling", "Calendar", "Booking", "Maps", "Geo", "Routing",
	"Config", "FeatureFlags", "Secrets", "Tenants", "Webhooks", "Exports",
	"Imports", "Backup", "Payroll", "Tax",
}

// serviceQualifiers and serviceTiers follow the domain in a service name;
// both may be empty, so their union must be prefix-free.
var serviceQualifiers = []string{
	"", "Gateway", "Api", "Worker", "Sync", "Core", "Edge", "Admin", "Batch",
	"Stream", "Query", "Command", "Ingest", "Proxy", "Cron", "Bridge",
}

var serviceTiers = []string{
	"", "Shadow", "Internal", "Legacy", "Eu", "Us", "Apac", "Next", "Lite", "Beta",
}

// word pairs a package or file name with the phrase its description uses.
type word struct{ name, phrase string }

// components are the package segments below a service ("pkg/payments-api/retry").
var components = []word{
	{"api", "HTTP and gRPC handlers"}, {"client", "clients for downstream services"},
	{"store", "persistence"}, {"cache", "read-through caching"},
	{"retry", "retry and backoff policies"}, {"queue", "work queues"},
	{"worker", "background workers"}, {"model", "domain types"},
	{"parser", "input parsing"}, {"validation", "input validation"},
	{"config", "configuration loading"}, {"metrics", "metrics and dashboards"},
	{"events", "domain events"}, {"schema", "database schema"},
	{"migrations", "schema migrations"}, {"router", "request routing"},
	{"middleware", "HTTP middleware"}, {"transport", "network transport"},
	{"codec", "wire encoding"}, {"ratelimit", "rate limiting"},
	{"scheduler", "job scheduling"}, {"notify", "user notifications"},
	{"export", "data export"}, {"ingest", "data ingestion"},
	{"reconcile", "reconciliation jobs"}, {"authz", "authorization checks"},
	{"session", "session handling"}, {"audit", "audit logging"},
	{"webhook", "webhook delivery"}, {"search", "search indexing"},
	{"billing", "billing integration"}, {"tenancy", "tenant isolation"},
	{"health", "health checks"}, {"tracing", "distributed tracing"},
	{"featureflag", "feature flags"}, {"crypto", "signing and encryption"},
	{"pagination", "cursor pagination"}, {"locking", "distributed locks"},
	{"outbox", "transactional outbox"}, {"admin", "admin endpoints"},
}

// subcomponents extend a package path when a service has more packages
// than components ("pkg/payments-api/retry/internal").
var subcomponents = []string{
	"internal", "next", "testutil", "legacy", "grpc", "http", "sql", "redis",
	"kafka", "s3", "mock", "impl",
}

// fileWords are file names within a package ("parser.go").
var fileWords = []word{
	{"parser", "Parsing"}, {"handler", "Request handlers"}, {"client", "Client"},
	{"server", "Server wiring"}, {"store", "Storage access"}, {"cache", "Caching"},
	{"retry", "Retry helpers"}, {"types", "Type definitions"}, {"errors", "Error values"},
	{"config", "Configuration"}, {"util", "Helpers"}, {"validate", "Validation"},
	{"encode", "Encoding"}, {"decode", "Decoding"}, {"router", "Routing"},
	{"middleware", "Middleware"}, {"metrics", "Metrics"}, {"worker", "Worker loop"},
	{"queue", "Queue handling"}, {"job", "Job definitions"}, {"service", "Service logic"},
	{"model", "Models"}, {"repository", "Repository"}, {"mapper", "Mapping"},
	{"convert", "Conversions"}, {"auth", "Authentication"}, {"session", "Sessions"},
	{"token", "Tokens"}, {"limiter", "Rate limiting"}, {"backoff", "Backoff"},
	{"stream", "Streaming"}, {"batch", "Batching"}, {"sync", "Synchronisation"},
	{"migrate", "Migrations"}, {"export", "Export"}, {"import", "Import"},
	{"report", "Reports"}, {"notify", "Notifications"}, {"health", "Health checks"},
	{"options", "Options"},
}

// verb is a function-name verb with its third-person form for descriptions.
type verb struct{ name, third string }

var verbs = []verb{
	{"Parse", "Parses"}, {"Validate", "Validates"}, {"Load", "Loads"},
	{"Save", "Saves"}, {"Fetch", "Fetches"}, {"Build", "Builds"},
	{"Compute", "Computes"}, {"Apply", "Applies"}, {"Render", "Renders"},
	{"Encode", "Encodes"}, {"Decode", "Decodes"}, {"Resolve", "Resolves"},
	{"Merge", "Merges"}, {"Handle", "Handles"}, {"Process", "Processes"},
	{"Send", "Sends"}, {"Publish", "Publishes"}, {"Schedule", "Schedules"},
	{"Cancel", "Cancels"}, {"Retry", "Retries"}, {"Refresh", "Refreshes"},
	{"Normalize", "Normalizes"}, {"Format", "Formats"}, {"Convert", "Converts"},
	{"Export", "Exports"}, {"Import", "Imports"}, {"Reconcile", "Reconciles"},
	{"Authorize", "Authorizes"}, {"Verify", "Verifies"}, {"Sign", "Signs"},
	{"Emit", "Emits"}, {"List", "Lists"}, {"Create", "Creates"},
	{"Update", "Updates"}, {"Delete", "Deletes"}, {"Archive", "Archives"},
	{"Restore", "Restores"}, {"Compare", "Compares"}, {"Filter", "Filters"},
	{"Aggregate", "Aggregates"}, {"Enqueue", "Enqueues"}, {"Dequeue", "Dequeues"},
	{"Lock", "Locks"}, {"Unlock", "Unlocks"}, {"Split", "Splits"},
	{"Sync", "Syncs"}, {"Sort", "Sorts"}, {"Index", "Indexes"},
}

// nouns are the business entities of functions, interfaces and errors.
var nouns = []string{
	"Invoice", "Payment", "Order", "Account", "User", "Session", "Token",
	"Refund", "Ledger", "Cart", "Product", "Price", "Shipment", "Parcel",
	"Address", "Customer", "Merchant", "Tenant", "Report", "Metric", "Event",
	"Message", "Notification", "Email", "Webhook", "Subscription", "Plan",
	"Coupon", "Review", "Ticket", "Booking", "Route", "Document", "Upload",
	"Image", "Profile", "Policy", "Role", "Permission", "Quota", "Shift",
	"Job", "Record", "Snapshot", "Config", "Secret", "Key", "Certificate",
	"Cursor", "Query", "Feed", "Transaction", "Transfer", "Balance",
	"Statement", "Receipt", "Charge", "Dispute", "Payout", "Vendor",
	"Warehouse", "Catalog", "Bundle", "Discount",
}

// objects follow the noun in a function name ("ParseInvoice" + "Line").
var objects = []string{
	"Line", "Total", "Status", "Batch", "Header", "Items", "Fields", "Request",
	"Response", "Payload", "Entry", "Summary", "Limits", "Window", "Digest",
	"Metadata", "State", "Schema", "Rules", "Ids", "Keys", "Chunks", "Errors",
	"Retries", "Attempts", "Tags", "Labels", "Counts", "Links", "Options",
	"Diff", "Hash",
}

// funcQualifiers end a function name; "" is the common case.
var funcQualifiers = []string{
	"", "Async", "Batched", "Safe", "Locked", "Cached", "Ctx", "Once",
}

// ifacePrefixes may precede the noun of an interface name, so prefixes and
// nouns together must be prefix-free.
var ifacePrefixes = []string{
	"", "Async", "Cached", "Remote", "Local", "Buffered", "Streaming", "Secure",
	"Versioned", "Scoped", "Sharded", "Replicated", "Readonly", "Retrying",
	"Metered", "Traced", "Pooled", "Lazy", "Signed", "Batching", "Encrypted",
	"Audited", "Throttled", "Indexed",
}

// ifaceRoles end an interface name, paired with the phrase "Interface for
// <noun> <phrase>" uses.
var ifaceRoles = []word{
	{"Store", "storage"}, {"Reader", "reads"}, {"Writer", "writes"},
	{"Client", "remote access"}, {"Handler", "request handling"},
	{"Provider", "lookup"}, {"Repository", "persistence"}, {"Cache", "caching"},
	{"Validator", "validation"}, {"Publisher", "event publishing"},
	{"Resolver", "resolution"}, {"Encoder", "encoding"}, {"Decoder", "decoding"},
	{"Notifier", "notifications"}, {"Formatter", "formatting"},
	{"Loader", "loading"}, {"Signer", "signing"}, {"Limiter", "rate limiting"},
	{"Router", "routing"}, {"Watcher", "change watching"},
}

// errorOps are the operation in an error name, with the gerund its
// message uses ("ErrInvoiceReadTimeout": "timeout reading invoice").
var errorOps = []word{
	{"Read", "reading"}, {"Write", "writing"}, {"Parse", "parsing"},
	{"Encode", "encoding"}, {"Decode", "decoding"}, {"Lookup", "looking up"},
	{"Commit", "committing"}, {"Dial", "dialing"}, {"Auth", "authenticating"},
	{"Sync", "syncing"}, {"Publish", "publishing"}, {"Render", "rendering"},
	{"Query", "querying"}, {"Flush", "flushing"}, {"Load", "loading"},
	{"Save", "saving"}, {"Sign", "signing"}, {"Verify", "verifying"},
	{"Fetch", "fetching"}, {"Send", "sending"}, {"Lock", "locking"},
	{"Index", "indexing"}, {"Open", "opening"}, {"Close", "closing"},
}

// errorConds end an error name, with the message phrase.
var errorConds = []word{
	{"Timeout", "timeout"}, {"NotFound", "not found"}, {"Invalid", "invalid input"},
	{"Conflict", "conflict"}, {"Closed", "connection closed"},
	{"Exhausted", "resources exhausted"}, {"Expired", "expired"},
	{"Denied", "permission denied"}, {"Unavailable", "backend unavailable"},
	{"Corrupt", "corrupt data"}, {"TooLarge", "payload too large"},
	{"Duplicate", "duplicate key"}, {"Canceled", "canceled"},
	{"Overflow", "buffer overflow"}, {"Stale", "stale version"},
	{"Missing", "missing field"}, {"Busy", "resource busy"},
	{"Empty", "empty result"}, {"Locked", "already locked"},
	{"Throttled", "rate limited"},
}
