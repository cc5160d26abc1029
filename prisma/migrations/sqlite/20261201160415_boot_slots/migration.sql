-- CreateTable
CREATE TABLE "BootSlot" (
    "workflowId" TEXT NOT NULL PRIMARY KEY,
    "siteId" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "slot" INTEGER,
    "queuedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "grantedAt" DATETIME,
    "checkedAt" DATETIME
);

-- CreateIndex
CREATE INDEX "BootSlot_siteId_queuedAt_idx" ON "BootSlot"("siteId", "queuedAt");

-- CreateIndex
CREATE UNIQUE INDEX "BootSlot_siteId_slot_key" ON "BootSlot"("siteId", "slot");

