/*
 * table.c - a chained hash table of intrusive nodes keyed by 64-bit integers.
 *
 * The gateway keys three things with it: JSON-RPC ids in flight (the ids it
 * invents are a counter, so routing a response is one lookup), sessions (the
 * first 64 bits of their random id) and sandboxes (FNV-1a of their id). Nodes
 * live inside the objects they index, so inserting never allocates except
 * when the slot array doubles.
 *
 * Invariants: nslots is 0 or a power of two; every node sits in the chain of
 * slot mix(key) & (nslots - 1); count is the number of nodes.
 */
#include "gateway/gateway_int.h"

#include <stdlib.h>

/* splitmix64's finalizer: counters and random ids alike spread over slots. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

void mb_gw__table_init(mb_gw_table *t)
{
    t->slots = NULL;
    t->nslots = 0;
    t->count = 0;
}

void mb_gw__table_dispose(mb_gw_table *t)
{
    free(t->slots);
    mb_gw__table_init(t);
}

static void grow(mb_gw_table *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 16;
    mb_gw_hnode **slots = mb_calloc(n, sizeof *slots);
    for (size_t i = 0; i < t->nslots; i++) {
        mb_gw_hnode *node = t->slots[i];
        while (node) {
            mb_gw_hnode *next = node->next;
            size_t j = (size_t)(mix(node->key) & (n - 1));
            node->next = slots[j];
            slots[j] = node;
            node = next;
        }
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
}

void mb_gw__table_insert(mb_gw_table *t, mb_gw_hnode *n, uint64_t key)
{
    if (t->count >= t->nslots) grow(t);
    n->key = key;
    size_t i = (size_t)(mix(key) & (t->nslots - 1));
    n->next = t->slots[i];
    t->slots[i] = n;
    t->count++;
}

void mb_gw__table_remove(mb_gw_table *t, mb_gw_hnode *n)
{
    if (!t->nslots) return;
    mb_gw_hnode **pp = &t->slots[mix(n->key) & (t->nslots - 1)];
    for (; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            n->next = NULL;
            t->count--;
            return;
        }
    }
}

mb_gw_hnode *mb_gw__table_find(const mb_gw_table *t, uint64_t key)
{
    if (!t->nslots) return NULL;
    for (mb_gw_hnode *n = t->slots[mix(key) & (t->nslots - 1)]; n; n = n->next)
        if (n->key == key) return n;
    return NULL;
}

mb_gw_hnode *mb_gw__table_next(const mb_gw_hnode *n)
{
    for (mb_gw_hnode *m = n->next; m; m = m->next)
        if (m->key == n->key) return m;
    return NULL;
}

/* The cursor encodes (slot << 16 | position in chain): chains are short, and
 * the caller never changes the table while iterating. */
mb_gw_hnode *mb_gw__table_at(const mb_gw_table *t, size_t *cursor)
{
    size_t slot = *cursor >> 16, pos = *cursor & 0xffff;
    for (; slot < t->nslots; slot++, pos = 0) {
        mb_gw_hnode *n = t->slots[slot];
        for (size_t i = 0; n && i < pos; i++) n = n->next;
        if (n && pos < 0xffff) {
            *cursor = (slot << 16) | (pos + 1);
            return n;
        }
    }
    *cursor = slot << 16;
    return NULL;
}

