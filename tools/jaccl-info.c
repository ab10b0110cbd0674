/* SPDX-License-Identifier: BSD-3-Clause */
/* jaccl-info: what the plugin would do on this machine, before NCCL is involved.
 *
 *   jaccl-info [--json] [-v] [PLUGIN]
 *   jaccl-info [--json] [-v] [PLUGIN] --rank R --nranks N --root HOST:PORT   (one per host)
 *
 * PLUGIN: a path, or a name resolved as NCCL resolves NCCL_NET_PLUGIN ("jaccl" tries jaccl,
 * then libnccl-net-jaccl.so); default: NCCL_NET_PLUGIN's first entry if set, else
 * libnccl-net-jaccl.so. Two views are printed:
 *   - the plugin's own: it is dlopen'ed like NCCL does, every ncclNetPlugin_vN /
 *     ncclCollNetPlugin_vN / ncclTunerPlugin_vN is looked up, and the v11 tables are driven
 *     through init, devices and getProperties;
 *   - the why: the same code, linked in from libjaccl-internal.a, runs the fabric choice, so
 *     the reason for verbs or tcp, the RDMA port and GID used, and the interfaces used are the
 *     plugin's own decisions, not a second opinion. What the tool adds is only the
 *     explanation for ports and interfaces that were not taken. The tuner's model is printed
 *     the same way: its constants, measured here, and where each came from.
 * With a rendezvous (as the perf tools take it, or under mpirun), every host's links are
 * gathered and the cluster is printed as a CollNet group would find it: which peer each of this
 * host's cables reaches, which pairs only a relay joins, the ring over the cables and the
 * algorithms the cables carry (core/coll_topo.c, the same code).
 * Exit status: 0 when the plugin offers at least one device, 1 (with the reason) when not,
 * 2 for a usage error. --json prints the same content as one JSON object. */
#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <link.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/route.h"
#include "nccl_abi/net.h"
#include "core/state.h"
#include "core/tuner.h"
#include "core/version.h"
#include "fabric/fabric.h"
#include "fabric/verbs/verbs_int.h"
#include "util/ifmatch.h"
#include "util/param.h"
#include "util/sock.h"
#include "util/hostid.h"
#include "util/subnet.h"
#include "mp.h"
#include "mp_host.h"

#define DEFAULT_PLUGIN "libnccl-net-jaccl.so"
#define MAX_DEPTH      16
#define MAX_DEVS       64

static int g_verbose;

/* ---- output: one set of calls renders either indented "key: value" text or JSON ---- */

static struct {
    int json;
    int depth;
    int count[MAX_DEPTH]; /* items already written at each depth (JSON commas, "(none)") */
    int array[MAX_DEPTH]; /* the container at this depth is an array */
    int dash;             /* text: the next line starts a list item ("- ") */
} g_o;

/* Starts an item: JSON comma and indentation; text indentation, "- " for a list item. */
static void o_indent(const char *key)
{
    int d = g_o.depth;

    if (g_o.json) {
        if (d > 0)
            printf("%s\n%*s", g_o.count[d] ? "," : "", 2 * d, "");
    } else if (g_o.dash) {
        printf("%*s- ", 2 * (d - 1), "");
        g_o.dash = 0;
    } else if (key == NULL && g_o.array[d]) {
        printf("%*s- ", 2 * d, "");
    } else {
        printf("%*s", 2 * d, "");
    }
    g_o.count[d]++;
}

static void o_json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* sep: what follows the key in text mode (": " before a value, ":" before a block). */
static void o_key(const char *key, const char *sep)
{
    o_indent(key);
    if (key == NULL)
        return;
    if (g_o.json) {
        o_json_str(key);
        printf(": ");
    } else {
        printf("%s%s", key, sep);
    }
}

/* An object ('{') or array ('['); key NULL inside an array. */
static void o_open(const char *key, char brace)
{
    if (g_o.json) {
        o_key(key, "");
        putchar(brace);
    } else if (key != NULL) {
        o_key(key, ":");
        putchar('\n');
    } else {
        g_o.count[g_o.depth]++;
        g_o.dash = 1; /* a list item: its first field goes on the "- " line */
    }
    g_o.depth++;
    g_o.count[g_o.depth] = 0;
    g_o.array[g_o.depth] = brace == '[';
}

static void o_close(char brace)
{
    int had = g_o.count[g_o.depth];

    if (!g_o.json && !had && brace == ']')
        printf("%*s(none)\n", 2 * g_o.depth, "");
    g_o.depth--;
    g_o.dash = 0;
    if (g_o.json && had)
        printf("\n%*s%c", 2 * g_o.depth, "", brace);
    else if (g_o.json)
        putchar(brace);
    if (g_o.json && g_o.depth == 0)
        putchar('\n');
}

static void o_str(const char *key, const char *val)
{
    o_key(key, ": ");
    if (!g_o.json)
        printf("%s\n", !val ? "-" : val[0] ? val : "\"\"");
    else if (val)
        o_json_str(val);
    else
        printf("null");
}

static void o_strf(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void o_strf(const char *key, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    o_str(key, buf);
}

static void o_int(const char *key, long long v)
{
    o_key(key, ": ");
    printf(g_o.json ? "%lld" : "%lld\n", v);
}

static void o_num(const char *key, double v, int decimals)
{
    o_key(key, ": ");
    printf(g_o.json ? "%.*f" : "%.*f\n", decimals, v);
}

static void o_bool(const char *key, int v)
{
    o_key(key, ": ");
    printf(g_o.json ? "%s" : "%s\n", v ? (g_o.json ? "true" : "yes") : (g_o.json ? "false" : "no"));
}

/* ---- loggers: the internal code's and the loaded plugin's ---- */

static char g_plugin_version[64];

static void log_line(const char *who, ncclDebugLogLevel level, const char *fmt, va_list ap)
{
    char buf[1024];

    vsnprintf(buf, sizeof(buf), fmt, ap);
    if (level == NCCL_LOG_WARN || g_verbose)
        fprintf(stderr, "%s %s %s\n", who, level == NCCL_LOG_WARN ? "WARN" : "INFO", buf);
}

static void internal_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_line("jaccl-info:", level, fmt, ap);
    va_end(ap);
}

/* The plugin's warnings were already shown by the internal run of the same code; only its INIT
 * line matters here, for the version the library itself reports. */
static void plugin_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                       const char *fmt, ...)
{
    char buf[1024];
    const char *p;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (g_verbose)
        fprintf(stderr, "plugin: %s\n", buf);
    p = strstr(buf, "jaccl ");
    if (p && strstr(p, ", fabric ") && !g_plugin_version[0])
        sscanf(p, "jaccl %63[^,]", g_plugin_version);
}

/* ---- the plugin as NCCL sees it ---- */

struct plugin_view {
    const char *error; /* NULL when the v11 net table offered devices */
    int tried_init;    /* the library loaded and had a v11 table */
    int ndev, coll_ndev;
};

/* dlopen as NCCL 2.28 does for one NCCL_NET_PLUGIN entry: the name as given, then, for a bare
 * name that is not already lib*.so, libnccl-net-<name>.so. *tried names the last attempt. */
static void *plugin_dlopen(const char *name, char *tried, size_t len)
{
    size_t n = strlen(name);
    void *h;

    snprintf(tried, len, "%s", name);
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h || strchr(name, '/') ||
        (strncmp(name, "lib", 3) == 0 && n > 3 && strcmp(name + n - 3, ".so") == 0))
        return h;
    snprintf(tried, len, "libnccl-net-%s.so", name);
    return dlopen(tried, RTLD_NOW | RTLD_LOCAL);
}

static void *plugin_open(const char *name)
{
    char tried[300];
    void *h = plugin_dlopen(name, tried, sizeof(tried));
    struct link_map *lm = NULL;
    char *path = NULL;

    o_open("plugin", '{');
    o_str("requested", name);
    if (!h) {
        o_str("path", NULL);
        o_str("error", dlerror());
        return NULL;
    }
    o_str("loaded_as", tried);
    /* The loader's own record of the file it mapped, made absolute (a relative
     * LD_LIBRARY_PATH entry gives a relative name). */
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0])
        path = realpath(lm->l_name, NULL);
    o_str("path", path ? path : tried);
    free(path);
    return h;
}

/* What NCCL would load: NCCL_NET_PLUGIN's first entry when it names one, else jaccl's name. */
static const char *plugin_name(const char *arg)
{
    static char first[256];
    const char *env = getenv("NCCL_NET_PLUGIN");

    if (arg)
        return arg;
    if (!env || !env[0] || strcasecmp(env, "none") == 0)
        return DEFAULT_PLUGIN;
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(env, ","), env);
    return first;
}

static void plugin_tables(void *h)
{
    char sym[32];

    o_open("tables", '[');
    for (int v = 12; v >= 6; v--) { /* what NCCL 2.30 looks for (2.28: from v11) */
        snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
        if (dlsym(h, sym))
            o_str(NULL, sym);
        snprintf(sym, sizeof(sym), "ncclCollNetPlugin_v%d", v);
        if (dlsym(h, sym))
            o_str(NULL, sym);
    }
    for (int v = 6; v >= 2; v--) { /* NCCL 2.30 from v6, 2.28 from v5 */
        snprintf(sym, sizeof(sym), "ncclTunerPlugin_v%d", v);
        if (dlsym(h, sym))
            o_str(NULL, sym);
    }
    o_close(']');
}

static void plugin_devices(const ncclNet_v11_t *net, int ndev)
{
    o_open("devices", '[');
    for (int i = 0; i < ndev; i++) {
        ncclNetProperties_v11_t p;

        o_open(NULL, '{');
        o_int("index", i);
        if (net->getProperties(i, &p) != ncclSuccess) {
            o_str("error", "getProperties failed");
        } else {
            o_str("name", p.name);
            o_str("pci_path", p.pciPath);
            o_int("speed_mbps", p.speed);
            o_int("port", p.port);
            o_int("max_comms", p.maxComms);
        }
        o_close('}');
    }
    o_close(']');
}

/* init + devices + getProperties + finalize on the v11 tables, as NCCL 2.28's first comm. */
static void plugin_drive(void *h, struct plugin_view *pv)
{
    const ncclNet_v11_t *net = dlsym(h, "ncclNetPlugin_v11");
    const ncclCollNet_v11_t *coll = dlsym(h, "ncclCollNetPlugin_v11");
    ncclNetCommConfig_v11_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    void *ctx = NULL, *cctx = NULL;

    if (!net) {
        pv->error = "the plugin has no ncclNetPlugin_v11 table";
        return;
    }
    o_str("net_name", net->name);
    pv->tried_init = 1;
    if (net->init(&ctx, 0, &cfg, plugin_log, NULL) != ncclSuccess) {
        pv->error = "the plugin's init failed";
        return;
    }
    o_str("library_version", g_plugin_version[0] ? g_plugin_version : NULL);
    if (net->devices(&pv->ndev) != ncclSuccess || pv->ndev <= 0)
        pv->error = "the plugin reports no device";
    else
        plugin_devices(net, pv->ndev);
    if (coll && coll->init(&cctx, 0, plugin_log) == ncclSuccess) {
        if (coll->devices(&pv->coll_ndev) != ncclSuccess)
            pv->coll_ndev = 0;
        coll->finalize(cctx);
    }
    o_int("collnet_devices", pv->coll_ndev);
    net->finalize(ctx);
}

static void plugin_section(const char *name, struct plugin_view *pv)
{
    void *h = plugin_open(name);

    if (h) {
        plugin_tables(h);
        plugin_drive(h, pv);
        dlclose(h);
    } else {
        pv->error = "the plugin library could not be loaded";
    }
    o_close('}');
}

/* ---- knobs ---- */

/* Where a knob's value came from; the one place to teach about new sources. */
/* Where a knob's value came from: its own variable, NCCL's equivalent (named), or the default
 * (saying so when the variable is set but invalid). */
static const char *knob_source(enum jaccl_param_id id, char *buf, size_t len)
{
    struct jaccl_param_info info;
    const char *env = getenv(jaccl_param_desc(id)->name);

    if (jaccl_param_get_info(id, &info) != 0)
        return "unknown";
    if (info.source == JPS_NCCL) {
        snprintf(buf, len, "%s (%s)", jaccl_param_source_str(info.source), info.var);
        return buf;
    }
    if (info.source == JPS_DEFAULT && env && env[0])
        return "default (the environment value is invalid)";
    return jaccl_param_source_str(info.source);
}

static void knobs_section(void)
{
    o_open("knobs", '[');
    for (int id = 0; id < JP_NUM_PARAMS; id++) {
        const struct jaccl_param_desc *d = jaccl_param_desc((enum jaccl_param_id)id);
        char src[96];

        o_open(NULL, '{');
        o_str("name", d->name);
        if (d->type == JPT_INT)
            o_strf("value", "%lld", (long long)jaccl_param_int((enum jaccl_param_id)id));
        else
            o_str("value", jaccl_param_str((enum jaccl_param_id)id));
        o_str("source", knob_source((enum jaccl_param_id)id, src, sizeof(src)));
        o_str("description", d->doc);
        o_close('}');
    }
    o_close(']');
}

/* ---- the fabric, from the internal code ---- */

struct fabric_view {
    int ok;    /* init succeeded */
    int verbs; /* the verbs fabric was chosen */
    int ndev;
    struct jaccl_link link[MAX_DEVS]; /* side-channel address and subnet per device */
    int have_addr[MAX_DEVS];
};

static void fabric_section(const struct fabric_view *fv)
{
    const struct fab_ops *ops = jaccl_fabric();

    o_open("fabric", '{');
    o_str("chosen", fv->ok && ops ? ops->name : NULL);
    o_str("reason", fab_why());
    /* The registry's word on every back end it did not use, in its trial order. */
    o_open("not_used", '[');
    for (int i = 0; i < fab_backend_count(); i++) {
        if (!fab_backend_why_not(i))
            continue;
        o_open(NULL, '{');
        o_str("name", fab_backend(i)->name);
        o_str("reason", fab_backend_why_not(i));
        o_close('}');
    }
    o_close(']');
    o_open("devices", '[');
    for (int i = 0; fv->ok && i < fv->ndev; i++) {
        char a[80] = "";

        if (fv->have_addr[i])
            jaccl_link_str(&fv->link[i], a, sizeof(a));
        o_open(NULL, '{');
        o_str("name", ops->dev_info(i)->name);
        o_str("address", fv->have_addr[i] ? a : NULL); /* address/prefix: the link */
        o_int("speed_mbps", ops->dev_info(i)->speed_mbps);
        o_close('}');
    }
    o_close(']');
    o_close('}');
}

/* ---- the tuner's model ---- */

/* Its constants as a communicator's tuner would build them now (the kernels measured here,
 * on this CPU), and where each came from: docs/tuner.md. */
static void tuner_section(void)
{
    struct jaccl_model m;
    int rc = jaccl_model_init(&m, 2, 1);
    const struct algo_kern_rates *r = algo_kern_rates();

    o_open("tuner", '{');
    o_bool("enabled", jaccl_param_int(JP_TUNER) != 0);
    o_str("model", rc == 0 ? "ok" : rc == -ENODEV ? "no device and no link knob" : "no memory");
    if (rc == 0 || rc == -ENOMEM) {
        o_num("link_GBps", m.plat.link_Bps / 1e9, 3);
        o_str("link_from", m.link_from);
        o_num("hop_us", m.plat.hop_s * 1e6, 2);
        o_str("hop_from", m.lat_from);
    }
    o_str("dtype", rc == 0 ? jaccl_dtype_name(m.dtype) : NULL);
    o_int("cache_KiB", (long long)(r->cache_bytes >> 10));
    o_int("operand_in_cache_KiB", (long long)(r->hot_bytes >> 10));
    o_int("operand_from_memory_KiB", (long long)(r->cold_bytes >> 10));
    o_open("kernels", '[');
    for (int t = 0; t < JD_NUM; t++) {
        if (!algo_kern_rated((enum jaccl_dtype)t))
            continue;
        o_open(NULL, '{');
        o_str("type", jaccl_dtype_name((enum jaccl_dtype)t));
        o_num("in_cache_GBps", r->hot_Bps[t] / 1e9, 2);
        o_num("from_memory_GBps", r->cold_Bps[t] / 1e9, 2);
        o_close('}');
    }
    o_close(']');
    o_close('}');
}

/* ---- RDMA devices, ports and GIDs ---- */

static const char *port_state_str(int s)
{
    static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};

    return s >= 0 && s < (int)(sizeof(names) / sizeof(names[0])) ? names[s] : "UNKNOWN";
}

static const char *link_layer_str(int ll)
{
    return ll == IBV_LINK_LAYER_ETHERNET      ? "Ethernet"
           : ll == IBV_LINK_LAYER_INFINIBAND  ? "InfiniBand"
           : ll == IBV_LINK_LAYER_UNSPECIFIED ? "unspecified"
                                              : "unknown";
}

/* The verbs device index jaccl made of this port, or -1. */
static int port_used(const struct fabric_view *fv, const char *ibname, int port)
{
    for (int i = 0; fv->verbs && i < fv->ndev; i++) {
        const struct vb_dev *d = vb_dev_get(i);

        if (d && d->port == port && strcmp(d->ibname, ibname) == 0)
            return i;
    }
    return -1;
}

/* Why the scan in verbs_dev.c passed this port over, in the order it checks. */
static void port_reason(const struct vb_ibv *ibv, struct ibv_context *ctx, const char *name,
                        int port, const struct ibv_port_attr *pa, char *buf, size_t len)
{
    struct jaccl_iflist hca;
    int forced = (int)jaccl_param_int(JP_GID_INDEX);
    union ibv_gid g;

    if (strcmp(jaccl_param_str(JP_FABRIC), "tcp") == 0)
        snprintf(buf, len, "NCCL_JACCL_FABRIC=tcp");
    else if (pa->state != IBV_PORT_ACTIVE)
        snprintf(buf, len, "port is %s, not ACTIVE", port_state_str(pa->state));
    else if (pa->link_layer != IBV_LINK_LAYER_ETHERNET &&
             pa->link_layer != IBV_LINK_LAYER_INFINIBAND &&
             pa->link_layer != IBV_LINK_LAYER_UNSPECIFIED)
        snprintf(buf, len, "link layer %d is not supported", pa->link_layer);
    else if (jaccl_iflist_parse(jaccl_param_str(JP_HCA), &hca) != 0 ||
             !jaccl_iflist_match(&hca, name, port))
        snprintf(buf, len, "not selected by NCCL_JACCL_HCA='%s'", jaccl_param_str(JP_HCA));
    else if (pa->link_layer == IBV_LINK_LAYER_ETHERNET && forced >= 0 &&
             vb_gid_choose(ibv, ctx, port, pa->gid_tbl_len, forced, &g) < 0)
        snprintf(buf, len, "no usable GID at NCCL_JACCL_GID_INDEX=%d", forced);
    else if (pa->link_layer == IBV_LINK_LAYER_ETHERNET &&
             vb_gid_choose(ibv, ctx, port, pa->gid_tbl_len, forced, &g) < 0)
        snprintf(buf, len, "no usable RoCE GID (IPv4-mapped, or RoCE v2 global IPv6)");
    else
        snprintf(buf, len, "the verbs fabric was not chosen (%s)", fab_why());
}

static void gids_section(const struct vb_ibv *ibv, struct ibv_context *ctx, int port,
                         const struct ibv_port_attr *pa, int used_gid)
{
    o_open("gids", '[');
    for (int i = 0; i < pa->gid_tbl_len; i++) {
        static const uint8_t zero[16];
        union ibv_gid g;
        char s[INET6_ADDRSTRLEN];
        int v2;

        if (ibv->query_gid(ctx, (uint8_t)port, i, &g) != 0 || memcmp(g.raw, zero, 16) == 0)
            continue;
        v2 = ibv->gid_is_v2(ctx, (uint8_t)port, i);
        inet_ntop(AF_INET6, g.raw, s, sizeof(s));
        o_open(NULL, '{');
        o_int("index", i);
        o_str("gid", s);
        o_str("type", pa->link_layer == IBV_LINK_LAYER_INFINIBAND ? "IB"
                      : v2 == 1                                   ? "RoCE v2"
                      : v2 == 0                                   ? "RoCE v1"
                                                                  : "unknown");
        o_bool("used", i == used_gid);
        o_close('}');
    }
    o_close(']');
}

static void port_section(const struct vb_ibv *ibv, struct ibv_context *ctx, const char *name,
                         int port, const struct fabric_view *fv)
{
    struct ibv_port_attr pa;
    int dev;
    char why[256];

    o_open(NULL, '{');
    o_int("port", port);
    if (ibv->query_port(ctx, (uint8_t)port, &pa) != 0) {
        o_str("error", "query_port failed");
        o_close('}');
        return;
    }
    dev = port_used(fv, name, port);
    o_str("state", port_state_str(pa.state));
    o_str("link_layer", link_layer_str(pa.link_layer));
    o_int("speed_mbps", vb_port_speed(pa.active_width, pa.active_speed));
    o_int("mtu", 128 << pa.active_mtu);
    o_bool("used", dev >= 0);
    if (dev >= 0) {
        o_int("jaccl_device", dev);
    } else {
        port_reason(ibv, ctx, name, port, &pa, why, sizeof(why));
        o_str("reason", why);
    }
    gids_section(ibv, ctx, port, &pa, dev >= 0 ? vb_dev_get(dev)->gid_index : -1);
    o_close('}');
}

static void rdma_device(const struct vb_ibv *ibv, struct ibv_device *ibdev,
                        const struct fabric_view *fv)
{
    const char *name = ibv->get_device_name(ibdev);
    struct ibv_context *ctx = ibv->open_device(ibdev);
    struct ibv_device_attr da;

    o_open(NULL, '{');
    o_str("name", name);
    if (!ctx || ibv->query_device(ctx, &da) != 0) {
        o_str("error", ctx ? "query_device failed" : "cannot open the device");
    } else {
        o_open("ports", '[');
        for (int p = 1; p <= da.phys_port_cnt; p++)
            port_section(ibv, ctx, name, p, fv);
        o_close(']');
    }
    if (ctx)
        ibv->close_device(ctx);
    o_close('}');
}

static void rdma_section(const struct fabric_view *fv)
{
    const char *why = NULL;
    const struct vb_ibv *ibv = vb_ibv_get(&why);
    struct ibv_device **list = NULL;
    int n = 0;

    o_open("rdma", '{');
    o_bool("libibverbs", ibv != NULL);
    if (ibv)
        list = ibv->get_device_list(&n);
    if (!ibv)
        o_str("note", why);
    else if (!list || n <= 0)
        o_str("note", "no RDMA device");
    o_open("devices", '[');
    for (int i = 0; list && i < n; i++)
        rdma_device(ibv, list[i], fv);
    o_close(']');
    if (list)
        ibv->free_device_list(list);
    o_close('}');
}

/* ---- IP interfaces ---- */

static int same_ip(const union jaccl_sockaddr *a, const struct sockaddr *b)
{
    if (a->sa.sa_family != b->sa_family)
        return 0;
    if (b->sa_family == AF_INET)
        return memcmp(&a->sin.sin_addr, &((const struct sockaddr_in *)b)->sin_addr, 4) == 0;
    return memcmp(&a->sin6.sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* The fabric device this interface is, or carries the side channel of; -1 if none. */
static int iface_used(const struct fabric_view *fv, const struct ifaddrs *all, const char *name)
{
    for (int i = 0; fv->ok && i < fv->ndev; i++) {
        if (!fv->verbs && strcmp(jaccl_fabric()->dev_info(i)->name, name) == 0)
            return i;
        for (const struct ifaddrs *a = all; fv->verbs && fv->have_addr[i] && a; a = a->ifa_next)
            if (a->ifa_addr && strcmp(a->ifa_name, name) == 0 &&
                same_ip(&fv->link[i].addr, a->ifa_addr))
                return i;
    }
    return -1;
}

static void iface_reason(const struct fabric_view *fv, int up, int nip, char *buf, size_t len)
{
    const char *own = jaccl_param_str(JP_SOCKET_IFNAME), *nccl = getenv("NCCL_SOCKET_IFNAME");

    if (!fv->ok)
        snprintf(buf, len, "no fabric was opened");
    else if (fv->verbs)
        snprintf(buf, len, "carries no RDMA port's side channel");
    else if (!up || nip == 0)
        snprintf(buf, len, "%s", !up ? "interface is down" : "no IP address");
    else if (own[0])
        snprintf(buf, len, "not selected by NCCL_JACCL_SOCKET_IFNAME='%s'", own);
    else if (nccl && nccl[0])
        snprintf(buf, len, "not selected by NCCL_SOCKET_IFNAME='%s'", nccl);
    else
        snprintf(buf, len,
                 "passed over by the default order (ib* first; docker*, lo, virbr* "
                 "only when nothing else has an address)");
}

static void iface_one(const struct fabric_view *fv, const struct ifaddrs *all,
                      const struct ifaddrs *first)
{
    int nip = 0, dev = iface_used(fv, all, first->ifa_name);
    char why[256];

    o_open(NULL, '{');
    o_str("name", first->ifa_name);
    o_bool("up", (first->ifa_flags & IFF_UP) != 0);
    o_open("addresses", '[');
    for (const struct ifaddrs *a = first; a; a = a->ifa_next) {
        char s[INET6_ADDRSTRLEN];
        const void *ip;

        if (strcmp(a->ifa_name, first->ifa_name) != 0 || !a->ifa_addr ||
            (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
            continue;
        ip = a->ifa_addr->sa_family == AF_INET
                     ? (const void *)&((const struct sockaddr_in *)a->ifa_addr)->sin_addr
                     : (const void *)&((const struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
        inet_ntop(a->ifa_addr->sa_family, ip, s, sizeof(s));
        o_str(NULL, s);
        nip++;
    }
    o_close(']');
    o_bool("used", dev >= 0);
    if (dev >= 0) {
        if (fv->verbs)
            o_strf("role", "side channel of %s", jaccl_fabric()->dev_info(dev)->name);
        else
            o_strf("role", "tcp device %d", dev);
    } else {
        iface_reason(fv, (first->ifa_flags & IFF_UP) != 0, nip, why, sizeof(why));
        o_str("reason", why);
    }
    o_close('}');
}

static void ifaces_section(const struct fabric_view *fv)
{
    struct ifaddrs *all = NULL;

    o_open("interfaces", '[');
    if (getifaddrs(&all) == 0) {
        for (const struct ifaddrs *a = all; a; a = a->ifa_next) {
            const struct ifaddrs *b = all;

            while (b != a && strcmp(b->ifa_name, a->ifa_name) != 0)
                b = b->ifa_next;
            if (b == a) /* first entry of this name */
                iface_one(fv, all, a);
        }
        freeifaddrs(all);
    }
    o_close(']');
}

/* ---- main ---- */

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: jaccl-info [--json] [-v] [PLUGIN] [--rank R --nranks N --root HOST:PORT]\n"
               "  PLUGIN  path or name of the plugin, resolved as NCCL_NET_PLUGIN is (default:\n"
               "          NCCL_NET_PLUGIN's first entry, else " DEFAULT_PLUGIN ")\n"
               "  --json  print JSON instead of text\n"
               "  -v      also print the plugin's log lines on stderr\n"
               "  with a rendezvous (one jaccl-info per host): the cables between the hosts\n");
    mp_host_usage();
    return rc;
}

/* ---- the cluster, gathered over a rendezvous ---- */

struct cluster_view {
    int ok, nranks, rank;
    struct jaccl_handle hs[MP_MAX_RANKS];
    struct coll_topo t;
};

/* Every host's links travel as a CollNet handle would carry them (no port: nothing listens). */
static int cluster_rank(int rank, int nranks, void *arg)
{
    struct cluster_view *cv = arg;
    struct jaccl_handle h = {.kind = JH_COLL, .nlanes = 1, .host = jaccl_host_id()};
    unsigned char b[NCCL_NET_HANDLE_MAXSIZE];
    h.nlinks = jaccl_links(h.links, NULL, JACCL_HANDLE_LINKS_MAX);
    h.nlinks = jaccl_handle_encode(&h, b);
    mp_publish_handle(0, b);
    mp_barrier();
    const char *why = "";
    cv->rank = rank;
    cv->nranks = nranks;
    for (int r = 0; r < nranks; r++)
        if (jaccl_handle_decode(mp_peer_handle(r, 0), JH_COLL, &cv->hs[r], &why) != 0) {
            fprintf(stderr, "jaccl-info: rank %d's links: %s\n", r, why);
            return 1;
        }
    cv->ok = coll_topo_build(&cv->t, cv->hs, nranks) == 0;
    return !cv->ok;
}

/* The rendezvous's own lines go to stderr: stdout carries the report (JSON too). */
static void cluster_collect(struct cluster_view *cv, const struct fabric_view *fv)
{
    if (!fv->ok || !mp_hosted())
        return;
    fflush(stdout);
    int out = dup(1);
    dup2(2, 1);
    mp_run("cluster", "the cluster", mp_host_get()->nranks, 60, cluster_rank, cv);
    fflush(stdout);
    dup2(out, 1);
    close(out);
}

static void cluster_peer(const struct cluster_view *cv, int p)
{
    struct jaccl_cable c[JACCL_CABLES_MAX];
    struct jaccl_link mine[JACCL_HANDLE_LINKS_MAX];
    int devs[JACCL_HANDLE_LINKS_MAX], nmine = jaccl_links(mine, devs, JACCL_HANDLE_LINKS_MAX);
    const struct jaccl_handle *me = &cv->hs[cv->rank], *him = &cv->hs[p];
    int n = jaccl_cables_match(mine, devs, nmine, him->links, him->nlinks, me->host == him->host,
                               -1, c, JACCL_CABLES_MAX);
    char line[256] = "";
    for (int i = 0, off = 0; i < n && off < (int)sizeof(line); i++)
        off += snprintf(line + off, sizeof(line) - (size_t)off, "%s%s %s > %s", i ? ", " : "",
                        jaccl_dev_name(c[i].dev), jaccl_link_str(&c[i].local, (char[64]){0}, 64),
                        jaccl_host_str(&c[i].remote, (char[64]){0}, 64));
    o_open(NULL, '{');
    o_int("rank", p);
    o_str("cables", n ? line : NULL);
    o_str("reached", n ? "directly" : "through a relay (a node cabled to both)");
    o_close('}');
}

static void cluster_section(const struct cluster_view *cv)
{
    if (!cv->ok)
        return;
    const struct coll_topo *t = &cv->t;
    o_open("cluster", '{');
    o_int("rank", cv->rank);
    o_int("ranks", cv->nranks);
    o_str("found", t->what);
    char ring[512] = "", algos[64] = "", relayed[512] = "";
    for (int p = 0, off = 0; p < cv->nranks; p++)
        off += snprintf(ring + off, sizeof(ring) - (size_t)off, "%s%d", p ? " " : "",
                        t->ring.rank_at[p]);
    o_str("ring", ring);
    unsigned carried = coll_topo_carries(t);
    for (int a = 0, off = 0; a < ALGO_LOCAL; a++)
        if (carried & ALGO_BIT(a))
            off += snprintf(algos + off, sizeof(algos) - (size_t)off, "%s%s", off ? "," : "",
                            algo_name((enum algo_id)a));
    o_str("algorithms", algos);
    for (int a = 0, off = 0; a < cv->nranks; a++)
        for (int b = a + 1; b < cv->nranks; b++)
            if (!coll_topo_joined(t, a, b))
                off += snprintf(relayed + off, sizeof(relayed) - (size_t)off, "%s%d-%d",
                                off ? " " : "", a, b);
    o_str("relayed_pairs", relayed[0] ? relayed : "none");
    o_open("peers", '[');
    for (int p = 0; p < cv->nranks; p++)
        if (p != cv->rank)
            cluster_peer(cv, p);
    o_close(']');
    o_close('}');
}

/* The internal code's choice: fabric, devices and the address each one binds. */
static void fabric_collect(struct fabric_view *fv, void **ctx)
{
    fv->ok = jaccl_init(ctx, 0, NULL, internal_log, NULL) == ncclSuccess;
    fv->verbs = fv->ok && jaccl_fabric() && strcmp(jaccl_fabric()->name, "verbs") == 0;
    fv->ndev = fv->ok ? jaccl_ndevs() : 0;
    if (fv->ndev > MAX_DEVS)
        fv->ndev = MAX_DEVS;
    for (int i = 0; i < fv->ndev; i++)
        fv->have_addr[i] = jaccl_dev_link(i, &fv->link[i]) == 0;
}

/* Declared so that the unit test can build this file with main renamed (-Dmain=...). */
int main(int argc, char **argv);

int main(int argc, char **argv)
{
    const char *name = NULL, *error;
    struct fabric_view fv = {0};
    struct plugin_view pv = {0};
    void *ictx = NULL;
    static struct cluster_view cv;

    if (mp_host_setup(&argc, argv) < 0)
        return usage(stderr, 2);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            g_o.json = 1;
        else if (strcmp(argv[i], "-v") == 0)
            g_verbose = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage(stdout, 0);
        else if (argv[i][0] == '-' || name != NULL)
            return usage(stderr, 2);
        else
            name = argv[i];
    }
    fabric_collect(&fv, &ictx);
    cluster_collect(&cv, &fv);

    o_open(g_o.json ? NULL : "jaccl-info", '{');
    o_str("version", JACCL_VERSION_STR);
    plugin_section(plugin_name(name), &pv);
    knobs_section();
    fabric_section(&fv);
    tuner_section();
    rdma_section(&fv);
    ifaces_section(&fv);
    cluster_section(&cv);
    /* A library that will not load says the most; then the fabric's own reason. */
    error = pv.error && !pv.tried_init ? pv.error : !fv.ok ? fab_why() : pv.error;
    o_bool("usable", error == NULL);
    if (error || g_o.json)
        o_str("error", error);
    o_close('}');
    jaccl_finalize(ictx);
    if (error)
        fprintf(stderr, "jaccl-info: nothing usable: %s\n", error);
    return error ? 1 : 0;
}
