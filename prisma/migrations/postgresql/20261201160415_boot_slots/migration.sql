-- CreateTable
CREATE TABLE "BootSlot" (
    "workflowId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "slot" INTEGER,
    "queuedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "grantedAt" TIMESTAMP(3),
    "checkedAt" TIMESTAMP(3),

    CONSTRAINT "BootSlot_pkey" PRIMARY KEY ("workflowId")
);

-- CreateIndex
CREATE INDEX "BootSlot_siteId_queuedAt_idx" ON "BootSlot"("siteId", "queuedAt");

-- CreateIndex
CREATE UNIQUE INDEX "BootSlot_siteId_slot_key" ON "BootSlot"("siteId", "slot");

