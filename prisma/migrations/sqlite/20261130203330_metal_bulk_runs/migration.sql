-- CreateTable
CREATE TABLE "MetalBulkRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "poolId" TEXT NOT NULL,
    "verb" TEXT NOT NULL,
    "wipe" TEXT,
    "reason" TEXT NOT NULL,
    "actorId" TEXT NOT NULL,
    "idempotencyKey" TEXT,
    "requestHash" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "total" INTEGER NOT NULL,
    "accepted" INTEGER NOT NULL DEFAULT 0,
    "refused" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,
    "cancelRequestedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME
);

-- CreateTable
CREATE TABLE "MetalBulkOutcome" (
    "bulkId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "nodeId" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "code" TEXT,
    "message" TEXT,
    "decidedAt" DATETIME,

    PRIMARY KEY ("bulkId", "seq")
);

-- CreateIndex
CREATE INDEX "MetalBulkRun_tenantId_createdAt_idx" ON "MetalBulkRun"("tenantId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "MetalBulkRun_tenantId_idempotencyKey_key" ON "MetalBulkRun"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE INDEX "MetalBulkOutcome_bulkId_outcome_seq_idx" ON "MetalBulkOutcome"("bulkId", "outcome", "seq");

-- CreateIndex
CREATE INDEX "MetalBulkOutcome_nodeId_idx" ON "MetalBulkOutcome"("nodeId");

-- CreateIndex
CREATE UNIQUE INDEX "MetalBulkOutcome_bulkId_nodeId_key" ON "MetalBulkOutcome"("bulkId", "nodeId");

