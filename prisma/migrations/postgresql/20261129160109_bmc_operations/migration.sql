-- CreateTable
CREATE TABLE "BmcOperation" (
    "id" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "agentNodeId" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "bmc" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "BmcOperation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BmcOperation_nodeId_idx" ON "BmcOperation"("nodeId");

-- CreateIndex
CREATE INDEX "BmcOperation_siteId_updatedAt_idx" ON "BmcOperation"("siteId", "updatedAt");

