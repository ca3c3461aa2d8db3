// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * iotap_labdrv: a small loadable PCI driver for QEMU's "edu" device
 * (vendor 0x1234, device 0x11e8), built by the lab tests against the lab
 * kernel's source so that mmiotrace records the accesses of a *module*
 * and iotap can name their code as function+0xoff [iotap_labdrv].
 *
 * readl/writel are inline (the access instruction is in this module's
 * code); ioread32 is a call into the kernel image (lib/iomap.c).
 *
 * Registers of the edu device (QEMU docs/specs/edu.rst): 0x00 ident
 * (RO, 0x010000ed), 0x04 liveness (RW, reads back ~value), 0x08 factorial
 * (RW: write n, read n! once status bit 0 clears), 0x20 status.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/io.h>
#include <linux/delay.h>

#define EDU_IDENT	0x00
#define EDU_LIVENESS	0x04
#define EDU_FACT	0x08
#define EDU_STATUS	0x20

/* A parameter, so that the compiler cannot specialise labdrv_factorial
 * for a constant (its kallsyms name would become labdrv_factorial.constprop.0). */
static uint fact_n = 5;
module_param(fact_n, uint, 0444);
MODULE_PARM_DESC(fact_n, "n of the factorial the probe asks the device for");

struct labdrv {
	void __iomem *regs;
};

static noinline u32 labdrv_check_liveness(void __iomem *regs, u32 v)
{
	writel(v, regs + EDU_LIVENESS);
	return readl(regs + EDU_LIVENESS);
}

static noinline u32 labdrv_factorial(void __iomem *regs, u32 n)
{
	int i;

	writel(n, regs + EDU_FACT);
	for (i = 0; i < 1000; i++) {
		if (!(readl(regs + EDU_STATUS) & 1))
			break;
		udelay(10);
	}
	return readl(regs + EDU_FACT);
}

static int labdrv_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct labdrv *d;
	u32 ident, live, fact;
	int err;

	d = devm_kzalloc(&pdev->dev, sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	err = pcim_enable_device(pdev);
	if (err)
		return err;
	d->regs = pcim_iomap(pdev, 0, 0);
	if (!d->regs)
		return -ENOMEM;
	pci_set_drvdata(pdev, d);

	/* Through lib/iomap.c's out-of-line accessor: mmiotrace records
	 * the PC of the access itself, so this one is named ioread32+0x..
	 * (kernel image), not labdrv_probe: the caller is not recorded. */
	ident = ioread32(d->regs + EDU_IDENT);
	live = labdrv_check_liveness(d->regs, 0x12345678);
	fact = labdrv_factorial(d->regs, fact_n);
	dev_info(&pdev->dev, "iotap_labdrv: ident %08x liveness %08x %u! = %u\n", ident, live, fact_n, fact);
	return 0;
}

static void labdrv_remove(struct pci_dev *pdev)
{
	struct labdrv *d = pci_get_drvdata(pdev);

	labdrv_check_liveness(d->regs, 0);
}

static const struct pci_device_id labdrv_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, labdrv_ids);

static struct pci_driver labdrv_driver = {
	.name = "iotap_labdrv",
	.id_table = labdrv_ids,
	.probe = labdrv_probe,
	.remove = labdrv_remove,
};
module_pci_driver(labdrv_driver);

MODULE_DESCRIPTION("iotap lab driver for QEMU's edu device");
MODULE_LICENSE("Dual MIT/GPL");
