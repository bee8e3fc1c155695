/* SPDX-License-Identifier: Apache-2.0 */
#include "er_arena.h"

void er_arena_init(struct er_arena_s *arena, void *base, size_t size)
{
	arena->base = base;
	arena->size = size;
	arena->used = 0;
}

void er_arena_reset(struct er_arena_s *arena)
{
	arena->used = 0;
}

void *er_arena_alloc(struct er_arena_s *arena, size_t len, size_t align)
{
	if (align == 0 || (align & (align - 1)) != 0) {
		return NULL;
	}
	uintptr_t start = (uintptr_t)arena->base + arena->used;
	size_t pad = (size_t)((align - (start & (align - 1))) & (align - 1));

	if (pad > arena->size - arena->used || len > arena->size - arena->used - pad) {
		return NULL;
	}
	arena->used += pad + len;
	return (void *)(start + pad);
}
