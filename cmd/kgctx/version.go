package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version, when set at link time (-ldflags "-X main.version=v1.2.3"),
// overrides the module version of the build information.
var version string

func versionCmd() *command {
	return &command{
		name:    "version",
		summary: "print the version and the VCS commit it was built from (also kgctx --version)",
		flags: func(fs *flag.FlagSet) body {
			return func(ctx context.Context, c *call) error {
				if len(c.args) > 0 {
					return c.usagef("unexpected argument %q", c.args[0])
				}
				fmt.Fprintln(c.stdout, buildVersion())
				return nil
			}
		},
	}
}

// versionString describes the build: "kgctx VERSION (commit REV[,
// modified], TIME) GO OS/ARCH". VERSION is override when set, else the
// main module's version, else "devel" (a build from a source tree reports
// "(devel)"). The commit comes from the vcs.* settings Go records unless
// built with -buildvcs=false (as .ci/run does) or outside a repository;
// it then reads "commit unknown". bi may be nil (no build information).
func versionString(bi *debug.BuildInfo, override string) string {
	v := override
	if v == "" && bi != nil {
		v = bi.Main.Version
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified, when string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			case "vcs.time":
				when = s.Value
			}
		}
	}
	commit := "commit unknown"
	if rev != "" {
		commit = "commit " + rev
		if modified == "true" {
			commit += ", modified"
		}
		if when != "" {
			commit += ", " + when
		}
	}
	goVersion := runtime.Version()
	if bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	return fmt.Sprintf("kgctx %s (%s) %s %s/%s", v, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}

func helpCmd() *command {
	return &command{
		name:    "help",
		summary: "show the help of kgctx or of a command (kgctx help graph stats)",
		args:    "[COMMAND [SUBCOMMAND]]",
		flags: func(fs *flag.FlagSet) body {
			return func(ctx context.Context, c *call) error {
				// "kgctx help graph stats" is "kgctx graph stats --help".
				return root().exec(ctx, "kgctx", append(c.args, "--help"), c.stdout, c.stderr)
			}
		},
	}
}

// buildVersion is versionString of this binary.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionString(bi, version)
}
