-- DropIndex
DROP INDEX "Node_siteId_idx";

-- DropIndex
DROP INDEX "Node_poolId_idx";

-- CreateIndex
CREATE INDEX "Node_tenantId_id_idx" ON "Node"("tenantId", "id");

-- CreateIndex
CREATE INDEX "Node_siteId_id_idx" ON "Node"("siteId", "id");

-- CreateIndex
CREATE INDEX "Node_poolId_id_idx" ON "Node"("poolId", "id");

