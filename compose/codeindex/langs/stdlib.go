package langs

// stdlib lists the standard libraries' top-level names, which are no nodes
// (as the Go indexer leaves the Go standard library out): Python's
// sys.stdlib_module_names (3.11, private ones aside), Node's built-in
// modules, Java's java, javax, jdk, sun and Rust's std, core, alloc.
var stdlib = map[string]map[string]bool{
	"python": set(
		"abc", "aifc", "antigravity", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore",
		"atexit", "audioop", "base64", "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile",
		"calendar", "cgi", "cgitb", "chunk", "cmath", "cmd", "code", "codecs", "codeop", "collections",
		"colorsys", "compileall", "concurrent", "configparser", "contextlib", "contextvars", "copy",
		"copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime", "dbm", "decimal",
		"difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum", "errno",
		"faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools",
		"gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip", "hashlib",
		"heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib", "inspect",
		"io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale", "logging",
		"lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder", "msilib",
		"msvcrt", "multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path", "numbers",
		"opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib", "pdb", "pickle", "pickletools",
		"pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath", "pprint", "profile",
		"pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data", "pyexpat", "queue",
		"quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter", "runpy", "sched",
		"secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal", "site", "smtpd",
		"smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3", "sre_compile", "sre_constants",
		"sre_parse", "ssl", "stat", "statistics", "string", "stringprep", "struct", "subprocess", "sunau",
		"symtable", "sys", "sysconfig", "syslog", "tabnanny", "tarfile", "telnetlib", "tempfile",
		"termios", "textwrap", "this", "threading", "time", "timeit", "tkinter", "token", "tokenize",
		"tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle", "turtledemo", "types", "typing",
		"unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings", "wave", "weakref",
		"webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp", "zipfile",
		"zipimport", "zlib", "zoneinfo", "__future__",
	),
	"js": set(
		"assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto",
		"dgram", "diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2", "https",
		"inspector", "module", "net", "os", "path", "perf_hooks", "process", "punycode", "querystring",
		"readline", "repl", "stream", "string_decoder", "sys", "test", "timers", "tls", "trace_events",
		"tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib",
	),
	"java": set("java", "javax", "jdk", "sun"),
	"rust": set("std", "core", "alloc", "proc_macro", "test"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
