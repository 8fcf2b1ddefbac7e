// Package debuginfod fetches debug files by build-id from debuginfod
// servers, as gdb, perf and elfutils' libdebuginfod do, into the cache
// they share, so that a file fetched by one of them is found by the
// others. It is a client of the protocol elfutils documents in
// debuginfod(8) and debuginfod-client-config(7).
//
// The downloads themselves are made by another program,
// kdtrace-debuginfod (cmd/kdtrace-debuginfod, over net/http), which a
// Client runs for each one, as git runs git-remote-https: net/http and
// crypto/tls would make kdtrace a third larger and slow down the start
// of every run, of which few download anything. It is looked for at the
// first download, beside the running program and then in $PATH, and
// refused if a user other than root and the running one could change it.
// The helper writes the body into the temporary file the Client gives it
// and reports the server's answer and its progress on a pipe (package
// wire); everything else, the cache, the checks and the timeout, is the
// Client's. A cancelled context or the timeout kills the helper; a
// process killed outright ends its helper too, whose standard input
// then ends.
//
// # Environment
//
// NewFromEnv reads the variables users already set for the other
// clients:
//
//   - DEBUGINFOD_URLS: the servers, separated by spaces, tried in order.
//     Unset or empty, there is no client and nothing goes to the network.
//   - DEBUGINFOD_CACHE_PATH: the cache; else $HOME/.debuginfod_client_cache
//     if it exists (the old default), else debuginfod_client under
//     $XDG_CACHE_HOME, else $HOME/.cache/debuginfod_client.
//   - DEBUGINFOD_TIMEOUT: seconds within which a server must send each
//     100 KiB of the file (or the rest of it), else it is skipped; 90 by
//     default, none when zero or negative. A value that is no number is
//     read as atoi reads it.
//   - DEBUGINFOD_PROGRESS: show the progress of downloads on stderr,
//     which is also done when stderr is a terminal.
//   - DEBUGINFOD_VERBOSE: say on stderr what is looked for and where.
//
// # Protocol and cache
//
// A file is GET <server>/buildid/<hex build-id>/debuginfo (or
// /executable). It lands in <cache>/<hex build-id>/debuginfo, written
// to a temporary file in that directory (debuginfo.XXXXXX) that is
// renamed into place only when complete and when its ELF build-id is
// the one asked for; on any failure, a cancelled context included, the
// temporary file is removed. One that a killed run left behind is
// removed by a later lookup of the same build-id once it has not been
// written to for an hour. Files are made read-only (0400), as elfutils
// makes them, with the server's Last-Modified time.
//
// When every server answers 404, an empty file takes the downloaded
// file's place: for cache_miss_s seconds (the number in that file of
// the cache directory, 600 by default) the lookup fails without asking
// again. Errors other than 404 are not remembered in the cache; a
// server that could not be reached is not asked again by the same
// Client, so that a program with many objects waits for a dead server
// once.
//
// Before each lookup the cache is cleaned if cache_clean_interval_s
// (86400 by default) seconds have passed since the last cleaning, that
// file's modification time: every downloaded or negative file whose
// access time is max_unused_age_s (604800 by default) or more in the
// past is removed, then every build-id directory as old and now empty.
// The three control files are created with their defaults when
// missing, as elfutils does.
//
// kdtrace runs as root, so the cache is opened through internal/cachedir:
// every directory on its path is checked, the build-id directories are
// created 0700 and reached without following links, and a cache another
// user could change is refused with the reason.
package debuginfod
