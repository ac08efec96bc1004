/*
 * browser.c - finding the browser @playwright/mcp launched, so that the
 * launcher notices when it dies: Chromium's main process is a direct child of
 * the Node process, and a pidfd of it becomes readable when it exits.
 */
#define _GNU_SOURCE
#include "playwright/playwright.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* The parent pid from /proc/PID/stat ("PID (comm) S PPID ..."; comm may hold
 * spaces and parentheses, so the last ')' ends it). -1 if unreadable. */
static long parent_of(const char *pid)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    long ppid = -1;
    if (!rp || sscanf(rp + 1, " %*c %ld", &ppid) != 1) return -1;
    return ppid;
}

pid_t mb_pw_browser_pid(pid_t node)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        if (parent_of(e->d_name) != (long)node) continue;
        char path[300], exe[4096];
        snprintf(path, sizeof path, "/proc/%s/exe", e->d_name);
        ssize_t n = readlink(path, exe, sizeof exe - 1);
        if (n <= 0) continue;
        exe[n] = '\0';
        const char *base = strrchr(exe, '/');
        base = base ? base + 1 : exe;
        if (strstr(base, "chrom") || strstr(base, "headless_shell"))
            found = (pid_t)strtol(e->d_name, NULL, 10);
    }
    closedir(d);
    return found;
}

int mb_pw_pidfd(pid_t pid)
{
    long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
}
