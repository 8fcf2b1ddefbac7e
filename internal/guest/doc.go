// Package guest boots a stock Debian kernel under QEMU to run kdtrace
// where this machine cannot: kernel probes (kprobes, kinst, fbt) need a
// kernel built with them, and the development and CI machines run one
// without. The guest is only a test bed; what runs in it is the same
// kdtrace that runs anywhere.
//
// Data flows in one direction:
//
//	Choose        which kernel: QueryArchive asks apt-cache what versions
//	              of Debian 12's 6.1 kernels the archive has, with their
//	              -dbg, headers and kbuild packages, Cached what the cache
//	              holds whole, and Choose takes the newest whose packages
//	              a test needs are all in one or the other (or the first
//	              such of a list of pinned builds), or says what each
//	              lacks;
//	FetchKernel   apt-get download of the linux-image package (or its
//	              -unsigned build) at that version into a cache keyed by
//	              it, vmlinuz and config extracted once (dpkg-deb -x), the
//	              .deb dropped;
//	FetchDebug    the same for the -dbg package's vmlinux with DWARF,
//	              streamed out of the 860 MB .deb alone (dpkg-deb
//	              --fsys-tarfile | tar -x --occurrence=1);
//	Initramfs     a gzipped newc cpio holding busybox (static), an /init
//	              that mounts proc, sys, dev, tracefs and debugfs, and the
//	              caller's files (a static kdtrace, load generators, the
//	              script to run); Config.Data's large files (the debug
//	              vmlinux at /usr/lib/debug/boot/vmlinux-<release>,
//	              where kdtrace looks for it) follow in an uncompressed
//	              cpio, which the kernel unpacks with a copy where gunzip
//	              under TCG would take many seconds;
//	Run           qemu-system-x86_64 under TCG with -no-reboot and
//	              panic=-1 and a deadline; the console is read from the
//	              serial port and the script's output cut out from
//	              between two sentinel lines that carry a per-boot nonce,
//	              with the script's exit status.
//
// FetchHeaders adds the kernel's headers and kbuild to the same cache
// (apt-get download of linux-headers-<release>, its -common and
// linux-kbuild, pinned to the kernel's version), and Headers.BuildModule
// builds an out-of-tree module against them with the host's gcc-12, the
// kernel's compiler: the test module of testdata/kmod, which the guest
// loads with insmod, carries its DWARF in the .ko.
//
// The script's output goes to a file in the guest first and is printed
// in one piece after the script ends, so that kernel messages on the
// console cannot land in the middle of it.
package guest
