/*
 * io.d: dtrace's I/O model on Linux.
 *
 * bufinfo_t describes a block I/O request and devinfo_t the device it
 * goes to, translated from the kernel's struct request (what the io
 * provider's probes give) or struct bio; fileinfo_t describes a file,
 * translated from an open struct file, or from the request or bio for
 * the file whose pages it reads or writes; fds[] are the files of the
 * current process by descriptor.
 *
 * As in procfs.d, members that Linux cannot fill are left out: a bio
 * has no buffer address, residual count or completion errno in dtrace's
 * sense; a file's mount point is not reachable as a struct path, for
 * d_path() to name, so fileinfo_t has no fi_mount.
 */

#pragma D depends_on module vmlinux

/* The b_flags this library sets. */
inline int B_READ = 0x40;
#pragma D binding "1.0" B_READ
inline int B_WRITE = 0x100;
#pragma D binding "1.0" B_WRITE

/*
 * Open flags, for fi_oflags, from Linux's asm-generic/fcntl.h. As with
 * fcntl(F_GETFL), test the access mode as (fi_oflags & O_ACCMODE) ==
 * O_WRONLY, and the other flags as bits.
 */
inline int O_ACCMODE = 00000003;
#pragma D binding "1.1" O_ACCMODE
inline int O_RDONLY = 00000000;
#pragma D binding "1.1" O_RDONLY
inline int O_WRONLY = 00000001;
#pragma D binding "1.1" O_WRONLY
inline int O_RDWR = 00000002;
#pragma D binding "1.1" O_RDWR
inline int O_CREAT = 00000100;
#pragma D binding "1.1" O_CREAT
inline int O_EXCL = 00000200;
#pragma D binding "1.1" O_EXCL
inline int O_NOCTTY = 00000400;
#pragma D binding "1.1" O_NOCTTY
inline int O_TRUNC = 00001000;
#pragma D binding "1.1" O_TRUNC
inline int O_APPEND = 00002000;
#pragma D binding "1.1" O_APPEND
inline int O_NONBLOCK = 00004000;
#pragma D binding "1.1" O_NONBLOCK
inline int O_NDELAY = O_NONBLOCK;
#pragma D binding "1.1" O_NDELAY
inline int O_DSYNC = 00010000;
#pragma D binding "1.1" O_DSYNC
inline int FASYNC = 00020000;
#pragma D binding "1.1" FASYNC
inline int O_DIRECT = 00040000;
#pragma D binding "1.1" O_DIRECT
inline int O_LARGEFILE = 00100000;
#pragma D binding "1.1" O_LARGEFILE
inline int O_DIRECTORY = 00200000;
#pragma D binding "1.1" O_DIRECTORY
inline int O_NOFOLLOW = 00400000;
#pragma D binding "1.1" O_NOFOLLOW
inline int O_NOATIME = 01000000;
#pragma D binding "1.1" O_NOATIME
inline int O_CLOEXEC = 02000000;
#pragma D binding "1.1" O_CLOEXEC
inline int O_SYNC = 04000000 | O_DSYNC;
#pragma D binding "1.1" O_SYNC
inline int O_PATH = 010000000;
#pragma D binding "1.1" O_PATH
inline int O_TMPFILE = 020000000 | O_DIRECTORY;
#pragma D binding "1.1" O_TMPFILE

/*
 * A block I/O request. Block numbers count 512-byte sectors, and b_edev
 * is the device number in the kernel's encoding (major << 20 | minor).
 */
typedef struct bufinfo {
	int b_flags;		/* B_READ or B_WRITE */
	size_t b_bcount;	/* bytes left to transfer */
	uint64_t b_lblkno;	/* first sector */
	uint64_t b_blkno;	/* first sector */
	dev_t b_edev;		/* device number */
} bufinfo_t;

/*
 * A block device: dev_name is its disk ("sda"), dev_statname the disk or
 * partition the request goes to ("sda1"), and dev_pathname its node in
 * /dev.
 */
typedef struct devinfo {
	int dev_major;		/* major number */
	int dev_minor;		/* minor number */
	string dev_name;	/* disk name */
	string dev_statname;	/* disk or partition name */
	string dev_pathname;	/* device node */
} devinfo_t;

/*
 * An open file. A NULL file, as fds[] gives for a descriptor that is
 * not open, translates to the name "<none>". The path is d_path()'s,
 * from the root of the mount tree; a file whose name the kernel makes
 * up when asked (d_dname: a pipe, a socket, an anonymous inode) has
 * the path "<unknown>", as illumos gives a vnode without a v_path.
 */
typedef struct fileinfo {
	string fi_name;		/* last component of the path */
	string fi_dirname;	/* the directory of the path */
	string fi_pathname;	/* the full path */
	string fi_fs;		/* file system type */
	longlong_t fi_offset;	/* file position */
	int fi_oflags;		/* open flags: O_* */
} fileinfo_t;

/*
 * The low bit of a request's operation (REQ_OP_WRITE is 1) tells whether
 * it writes, as op_is_write() tests it.
 */
translator bufinfo_t < struct bio *B > {
	b_flags = B->bi_opf & 1 ? B_WRITE : B_READ;
	b_bcount = B->bi_iter.bi_size;
	b_lblkno = B->bi_iter.bi_sector;
	b_blkno = B->bi_iter.bi_sector;
	b_edev = B->bi_bdev->bd_dev;
};

translator devinfo_t < struct bio *B > {
	dev_major = B->bi_bdev->bd_dev >> 20;
	dev_minor = B->bi_bdev->bd_dev & 0xfffff;
	dev_name = stringof(B->bi_bdev->bd_disk->disk_name);
	dev_statname = stringof(B->bi_bdev->bd_device.kobj.name);
	dev_pathname = strjoin("/dev/", stringof(B->bi_bdev->bd_device.kobj.name));
};

/*
 * A request of blk-mq, as the io provider gives it: its sectors and
 * bytes are those left to transfer, which at io:::done are all of them,
 * as it fires before any completes. The device is that of the request's
 * first bio, the disk or partition it was sent to; a request without
 * one (a flush) goes to the whole disk.
 */
translator bufinfo_t < struct request *R > {
	b_flags = R->cmd_flags & 1 ? B_WRITE : B_READ;
	b_bcount = R->__data_len;
	b_lblkno = R->__sector;
	b_blkno = R->__sector;
	b_edev = R->bio != NULL ? R->bio->bi_bdev->bd_dev : R->q->disk->part0->bd_dev;
};

translator devinfo_t < struct request *R > {
	dev_major = (R->bio != NULL ? R->bio->bi_bdev : R->q->disk->part0)->bd_dev >> 20;
	dev_minor = (R->bio != NULL ? R->bio->bi_bdev : R->q->disk->part0)->bd_dev & 0xfffff;
	dev_name = stringof(R->q->disk->disk_name);
	dev_statname = stringof((R->bio != NULL ? R->bio->bi_bdev : R->q->disk->part0)->bd_device.kobj.name);
	dev_pathname = strjoin("/dev/",
	    stringof((R->bio != NULL ? R->bio->bi_bdev : R->q->disk->part0)->bd_device.kobj.name));
};

/*
 * The file whose page cache holds a folio: the host inode of the
 * folio's mapping, named by its first dentry. An anonymous or movable
 * folio (the low bits of mapping set), as the user memory that O_DIRECT
 * reads into, has no file: its names are dtrace's "<unknown>" and
 * fi_offset is -1. The block device's own cache (metadata) is that of
 * an inode of file system "bdev" whose dentry has no name: fi_name is
 * "<unknown>" there too. fi_offset counts x86-64's 4 KiB pages
 * (PAGE_SHIFT 12).
 *
 * A page knows its inode, not the mount it was reached through: the
 * path is d_path_dentry()'s of the inode's first dentry, in the first
 * mount of its file system. For a file system mounted once that is the
 * path d_path() gives an open file; one mounted several times (bound,
 * or copied into another mount namespace) is named through its oldest
 * mount, the one at its place in the tree for the root file system.
 */
translator fileinfo_t < struct folio *F > {
	fi_name = F == NULL || F->mapping == NULL || ((uintptr_t)F->mapping & 3) != 0 ||
	    F->mapping->host->i_dentry.first == NULL ||
	    ((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)))->d_name.len == 0 ? "<unknown>" :
	    stringof(((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)))->d_name.name);
	fi_dirname = F == NULL || F->mapping == NULL || ((uintptr_t)F->mapping & 3) != 0 ||
	    F->mapping->host->i_dentry.first == NULL ||
	    ((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)))->d_name.len == 0 ? "<unknown>" :
	    dirname(d_path_dentry((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u))));
	fi_pathname = F == NULL || F->mapping == NULL || ((uintptr_t)F->mapping & 3) != 0 ||
	    F->mapping->host->i_dentry.first == NULL ||
	    ((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)))->d_name.len == 0 ? "<unknown>" :
	    d_path_dentry((struct dentry *)((uintptr_t)F->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)));
	fi_fs = F == NULL || F->mapping == NULL || ((uintptr_t)F->mapping & 3) != 0 ?
	    "<unknown>" : stringof(F->mapping->host->i_sb->s_type->name);
	fi_offset = F == NULL || F->mapping == NULL || ((uintptr_t)F->mapping & 3) != 0 ?
	    -1 : F->index << 12;
	fi_oflags = 0;
};

/*
 * The file of a segment of a bio is that of its page's folio (a page of
 * a large folio points at its head with the low bit of compound_head
 * set), at the page's position in the folio and the data's in the page.
 */
translator fileinfo_t < struct bio_vec *V > {
	fi_name = xlate <fileinfo_t> ((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page)).fi_name;
	fi_dirname = xlate <fileinfo_t> ((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page)).fi_dirname;
	fi_pathname = xlate <fileinfo_t> ((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page)).fi_pathname;
	fi_fs = xlate <fileinfo_t> ((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page)).fi_fs;
	fi_offset = ((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page))->mapping == NULL ||
	    ((uintptr_t)((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page))->mapping & 3) != 0 ? -1 :
	    ((((struct folio *)(V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page))->index +
	    ((uintptr_t)V->bv_page - (V->bv_page->compound_head & 1 ?
	    V->bv_page->compound_head - 1 : (uintptr_t)V->bv_page)) / sizeof (struct page)) << 12) +
	    V->bv_offset;
	fi_oflags = 0;
};

/*
 * The file a bio reads or writes is that of its first segment; a bio
 * without pages, as a flush or discard, has none.
 */
translator fileinfo_t < struct bio *B > {
	fi_name = B == NULL || B->bi_io_vec == NULL ? "<unknown>" :
	    xlate <fileinfo_t> (&B->bi_io_vec[B->bi_iter.bi_idx]).fi_name;
	fi_dirname = B == NULL || B->bi_io_vec == NULL ? "<unknown>" :
	    xlate <fileinfo_t> (&B->bi_io_vec[B->bi_iter.bi_idx]).fi_dirname;
	fi_pathname = B == NULL || B->bi_io_vec == NULL ? "<unknown>" :
	    xlate <fileinfo_t> (&B->bi_io_vec[B->bi_iter.bi_idx]).fi_pathname;
	fi_fs = B == NULL || B->bi_io_vec == NULL ? "<unknown>" :
	    xlate <fileinfo_t> (&B->bi_io_vec[B->bi_iter.bi_idx]).fi_fs;
	fi_offset = B == NULL || B->bi_io_vec == NULL ? -1 :
	    xlate <fileinfo_t> (&B->bi_io_vec[B->bi_iter.bi_idx]).fi_offset;
	fi_oflags = 0;
};

/* The file of a request is that of its first bio. */
translator fileinfo_t < struct request *R > {
	fi_name = xlate <fileinfo_t> (R->bio).fi_name;
	fi_dirname = xlate <fileinfo_t> (R->bio).fi_dirname;
	fi_pathname = xlate <fileinfo_t> (R->bio).fi_pathname;
	fi_fs = xlate <fileinfo_t> (R->bio).fi_fs;
	fi_offset = xlate <fileinfo_t> (R->bio).fi_offset;
	fi_oflags = 0;
};

translator fileinfo_t < struct file *F > {
	fi_name = F == NULL ? "<none>" : stringof(F->f_path.dentry->d_name.name);
	fi_dirname = F == NULL ? "<none>" :
	    F->f_path.dentry->d_op != NULL && F->f_path.dentry->d_op->d_dname != NULL ? "<unknown>" :
	    dirname(d_path(&F->f_path));
	fi_pathname = F == NULL ? "<none>" :
	    F->f_path.dentry->d_op != NULL && F->f_path.dentry->d_op->d_dname != NULL ? "<unknown>" :
	    d_path(&F->f_path);
	fi_fs = F == NULL ? "<none>" : stringof(F->f_inode->i_sb->s_type->name);
	fi_offset = F == NULL ? 0 : F->f_pos;
	fi_oflags = F == NULL ? 0 : F->f_flags;
};

/*
 * The current process's open files, by descriptor: its file table holds
 * max_fds slots.
 */
inline fileinfo_t fds[int fd] = xlate <fileinfo_t> (
    fd >= 0 && fd < curthread->files->fdt->max_fds ?
    curthread->files->fdt->fd[fd] : NULL);
#pragma D attributes Stable/Stable/Common fds
#pragma D binding "1.1" fds
