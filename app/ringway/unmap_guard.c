/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * munmap() for the whole process (unmap_guard.h). The executable's definition comes before
 * libc's for every shared object that calls munmap() through its PLT, PMDs loaded at run time
 * included (the linker exports it: librte_eal references it); glibc's own internal unmaps do
 * not come here.
 */
#include "unmap_guard.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_pause.h>

static _Atomic(const struct dp *) guard_dp;
/* munmap() calls between loading guard_dp and leaving dp_quiesce(). */
static atomic_uint guard_users;

void rw_unmap_guard_set(const struct dp *dp)
{
	atomic_store(&guard_dp, dp);
}

void rw_unmap_guard_clear(void)
{
	atomic_store(&guard_dp, NULL);
	/* Sequentially consistent with the calls' increment and load: a call that loaded the dp
	 * before the store above is counted here, a later one finds NULL. */
	while (atomic_load(&guard_users) != 0)
		rte_pause();
}

int munmap(void *addr, size_t len)
{
	if (atomic_load_explicit(&guard_dp, memory_order_relaxed) != NULL) {
		unsigned int lcore = rte_lcore_id();

		/* Workers never wait (for themselves); the main lcore and threads that are no
		 * lcore (the EAL interrupt thread, where PMDs handle their control channels) do. */
		if (lcore == LCORE_ID_ANY || lcore == rte_get_main_lcore()) {
			const struct dp *dp;

			atomic_fetch_add(&guard_users, 1);
			dp = atomic_load(&guard_dp);
			if (dp != NULL)
				dp_quiesce(dp);
			atomic_fetch_sub(&guard_users, 1);
		}
	}
	return (int)syscall(SYS_munmap, addr, len);
}
