/*
 * paths.c - every path under the data dir, built in one place.
 *
 * DIR (the absolute data dir) holds:
 *   DIR/mcpbox.db                 the store
 *   DIR/run/ID/                   state dir of the sandbox layer (control socket)
 *   DIR/workspaces/ID/            mount point of the workspace tmpfs (the quota)
 *   DIR/workspaces/ID/data/       what the sandbox sees as /data
 *   DIR/workspaces/ID/.logs/F     servers' stderr and the egress log
 *   DIR/workspaces/ID/state/F     services' state, /.mcpbox/state inside (gcloud.db)
 *   DIR/blobs/ID/NAME             uploads, baselines and dumps (transfer.c)
 *   DIR/egress/ID/                proxy sockets of a sandbox with egress
 * Callers free what these return.
 */
#include "core/core_int.h"

#include <stdlib.h>

char *mb_core__path_top(mb_core *core, const char *name)
{
    return mb_asprintf("%s/%s", core->cfg.data_dir, name);
}

char *mb_core__path_run(mb_core *core, const char *id)
{
    return mb_asprintf("%s/run/%s", core->cfg.data_dir, id);
}

char *mb_core__path_volume(mb_core *core, const char *id)
{
    return mb_asprintf("%s/workspaces/%s", core->cfg.data_dir, id);
}

char *mb_core_workspace(mb_core *core, const char *id)
{
    return mb_asprintf("%s/workspaces/%s/" MB_DATA_SUBDIR, core->cfg.data_dir, id);
}

char *mb_core__path_logs(mb_core *core, const char *id, const char *file)
{
    return file ? mb_asprintf("%s/workspaces/%s/.logs/%s", core->cfg.data_dir, id, file)
                : mb_asprintf("%s/workspaces/%s/.logs", core->cfg.data_dir, id);
}

char *mb_core__path_blob(mb_core *core, const char *id, const char *name)
{
    return name ? mb_asprintf("%s/blobs/%s/%s", core->cfg.data_dir, id, name)
                : mb_asprintf("%s/blobs/%s", core->cfg.data_dir, id);
}

char *mb_core__path_egress(mb_core *core, const char *id)
{
    return mb_asprintf("%s/egress/%s", core->cfg.data_dir, id);
}

char *mb_core_service_state(mb_core *core, const char *id, const char *file, int baseline)
{
    if (baseline) return mb_core__path_blob(core, id, file);
    return mb_asprintf("%s/workspaces/%s/" MB_SB_STATE_SUBDIR "/%s", core->cfg.data_dir, id, file);
}
