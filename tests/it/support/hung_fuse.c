/* A FUSE file system that never answers a lookup: every name under its root hangs like a
 * dead NFS server's, while the root itself answers (so the mount point stays usable).
 * Built and run by tests/it/support/hung_mount.rs. Usage: hung_fuse MOUNTPOINT
 * It says "mounted" on stdout once the kernel has the mount, then each lookup it leaves
 * unanswered, and runs until killed. */
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Never replied to: the caller's lookup waits in the kernel until the daemon dies. Each is
 * said on stdout ("lookup NAME"), so a test knows when a call is stuck here. */
static void hang_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
    (void)req, (void)parent;
    printf("lookup %s\n", name);
    fflush(stdout);
}

static void root_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi;
    if (ino != FUSE_ROOT_ID) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = FUSE_ROOT_ID;
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
    fuse_reply_attr(req, &st, 0);
}

static const struct fuse_lowlevel_ops ops = {
    .lookup = hang_lookup,
    .getattr = root_getattr,
};

int main(int argc, char *argv[]) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s MOUNTPOINT\n", argv[0]);
        return 2;
    }
    char *args[] = {argv[0], "-o", "fsname=hung", NULL};
    struct fuse_args fargs = FUSE_ARGS_INIT(3, args);
    struct fuse_session *se = fuse_session_new(&fargs, &ops, sizeof ops, NULL);
    if (se == NULL || fuse_session_mount(se, argv[1]) != 0) {
        fprintf(stderr, "hung_fuse: cannot mount %s\n", argv[1]);
        return 1;
    }
    printf("mounted\n");
    fflush(stdout);
    return fuse_session_loop(se) == 0 ? 0 : 1;
}
