/*
 * spawn.c - the attributes every helper process mcpbox spawns starts with:
 * no blocked signals, every signal back to its default action (the daemon
 * blocks and catches some), and a process group of its own, so that a
 * terminal's ^C to the daemon does not reach it and it can be killed as a
 * group.
 */
#include "util/util.h"

#include <signal.h>

void mb_spawnattr_init_clean(posix_spawnattr_t *attr)
{
    posix_spawnattr_init(attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &all);
    posix_spawnattr_setpgroup(attr, 0);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                       POSIX_SPAWN_SETPGROUP);
}
