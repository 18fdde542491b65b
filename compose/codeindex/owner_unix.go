//go:build unix

package codeindex

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// owned says whether the file fi describes belongs to this process's
// user.
func owned(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Uid == uint32(os.Geteuid())
}

// untrusted says why someone else than this process's user could have
// written the file or directory fi describes, or "".
func untrusted(fi fs.FileInfo) string {
	if !owned(fi) {
		return "owned by another user"
	}
	if p := fi.Mode().Perm(); p&0o022 != 0 {
		return fmt.Sprintf("writable by group or others (mode %04o)", p)
	}
	return ""
}
