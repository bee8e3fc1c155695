/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hello's platform conditions on Zephyr: what shapes a board's figures besides the op. The
 * optimisation level comes from Kconfig; clock source, regulator, caches and the trace unit
 * are read from the SoC's registers on each hello (they can change at run time), on the
 * SoCs whose registers were checked (VERIFIED.md); elsewhere they are "unknown".
 * firmware/README.md says what each value means for a measurement.
 */
#include "er_port_zephyr.h"

#include <zephyr/kernel.h>

#if defined(CONFIG_SOC_SERIES_NRF52X)
#include <hal/nrf_clock.h>
#include <hal/nrf_nvmc.h>
#include <hal/nrf_power.h>
#elif defined(CONFIG_SOC_SERIES_NRF53X)
#include <hal/nrf_cache.h>
#include <hal/nrf_clock.h>
#include <hal/nrf_regulators.h>
#elif defined(CONFIG_SOC_SERIES_STM32F4X)
#include <soc.h>
#endif
#if defined(CONFIG_CPU_CORTEX_M)
#include <cmsis_core.h>
#endif

#if defined(CONFIG_SPEED_OPTIMIZATIONS)
#define ER_OPTIMIZATION "-O2"
#elif defined(CONFIG_SIZE_OPTIMIZATIONS)
#define ER_OPTIMIZATION "-Os"
#elif defined(CONFIG_SIZE_OPTIMIZATIONS_AGGRESSIVE)
#define ER_OPTIMIZATION "-Oz"
#elif defined(CONFIG_DEBUG_OPTIMIZATIONS)
#define ER_OPTIMIZATION "-Og"
#else
#define ER_OPTIMIZATION "-O0"
#endif

enum {
	ER_COND_OPTIMIZATION,
	ER_COND_CLOCK,
	ER_COND_REGULATOR,
	ER_COND_CACHES,
	ER_COND_TRACE,
	ER_COND_IDLE,
	ER_COND_WINDOW_IRQS,
	ER_COND_COUNT,
};

static struct er_condition_s conditions[ER_COND_COUNT + 1] = {
	[ER_COND_OPTIMIZATION] = {"optimization", ER_OPTIMIZATION, 0},
	[ER_COND_CLOCK] = {"cpu_clock_source", "unknown", 0},
	[ER_COND_REGULATOR] = {"regulator", "unknown", 0},
	[ER_COND_CACHES] = {"caches", "unknown", 0},
	[ER_COND_TRACE] = {"trace_unit", "none", 0},
	[ER_COND_IDLE] = {"idle", "k_msleep", 0},
	/* Interrupts in a window and a batch's op runs (er_port_quiet_begin, er_port_zephyr.c). */
#if defined(CONFIG_TIMING_FUNCTIONS)
	[ER_COND_WINDOW_IRQS] = {"window_irqs", "masked", 0},
#elif defined(CONFIG_ARCH_POSIX)
	[ER_COND_WINDOW_IRQS] = {"window_irqs", "none", 0},
#else
	[ER_COND_WINDOW_IRQS] = {"window_irqs", "enabled", 0},
#endif
};

static void read_soc(void)
{
#if defined(CONFIG_SOC_SERIES_NRF52X) || defined(CONFIG_SOC_SERIES_NRF53X)
	nrf_clock_hfclk_t hf = NRF_CLOCK_HFCLK_LOW_ACCURACY;

	(void)nrf_clock_is_running(NRF_CLOCK, NRF_CLOCK_DOMAIN_HFCLK, &hf);
	conditions[ER_COND_CLOCK].text = hf == NRF_CLOCK_HFCLK_HIGH_ACCURACY ? "hfxo" : "hfint-rc";
#endif
#if defined(CONFIG_SOC_SERIES_NRF52X)
	conditions[ER_COND_REGULATOR].text = nrf_power_dcdcen_get(NRF_POWER) ? "dcdc" : "ldo";
	conditions[ER_COND_CACHES].text =
		nrf_nvmc_icache_enable_check(NRF_NVMC) ? "icache" : "none";
#elif defined(CONFIG_SOC_SERIES_NRF53X)
	conditions[ER_COND_REGULATOR].text =
		nrf_regulators_vreg_enable_check(NRF_REGULATORS, NRF_REGULATORS_VREG_MAIN)
			? "dcdc"
			: "ldo";
	conditions[ER_COND_CACHES].text = nrf_cache_enable_check(NRF_CACHE) ? "cache" : "none";
#elif defined(CONFIG_SOC_SERIES_STM32F4X)
	static const char *const sources[] = {"hsi", "hse", "pll-hsi", "pll-hse"};
	uint32_t sws = READ_BIT(RCC->CFGR, RCC_CFGR_SWS);
	size_t src = sws == RCC_CFGR_SWS_HSE ? 1 : 0;

	if (sws == RCC_CFGR_SWS_PLL) {
		src = READ_BIT(RCC->PLLCFGR, RCC_PLLCFGR_PLLSRC) ? 3 : 2;
	}
	conditions[ER_COND_CLOCK].text = sources[src];
	conditions[ER_COND_CACHES].text =
		READ_BIT(FLASH->ACR, FLASH_ACR_ICEN | FLASH_ACR_DCEN | FLASH_ACR_PRFTEN) ==
				(FLASH_ACR_ICEN | FLASH_ACR_DCEN | FLASH_ACR_PRFTEN)
			? "art-icache-dcache-prefetch"
			: "art-partly-off";
#endif
#if defined(CONFIG_CPU_CORTEX_M)
	/* DEMCR.TRCENA powers the DWT and ITM: the timing API sets it for the cycle counter. */
	conditions[ER_COND_TRACE].text =
		(CoreDebug->DEMCR & CoreDebug_DEMCR_TRCENA_Msk) != 0U ? "on" : "off";
#endif
}

const struct er_condition_s *er_port_zephyr_conditions(void)
{
	read_soc();
	return conditions;
}
