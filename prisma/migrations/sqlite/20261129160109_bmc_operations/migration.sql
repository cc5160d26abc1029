-- CreateTable
CREATE TABLE "BmcOperation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "nodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "agentNodeId" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "bmc" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "startedAt" DATETIME NOT NULL,
    "finishedAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "BmcOperation_nodeId_idx" ON "BmcOperation"("nodeId");

-- CreateIndex
CREATE INDEX "BmcOperation_siteId_updatedAt_idx" ON "BmcOperation"("siteId", "updatedAt");

