-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Node" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "poolId" TEXT,
    "role" TEXT NOT NULL,
    "provisionState" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "maintenance" BOOLEAN NOT NULL DEFAULT false,
    "power" TEXT,
    "failedFrom" TEXT,
    "lastError" JSONB,
    "workflowId" TEXT,
    "workflowSeq" INTEGER NOT NULL DEFAULT 0,
    "deployProfile" JSONB,
    "releaseWipe" TEXT,
    "hardwareProfile" TEXT,
    "driverBindings" JSONB,
    "bmcDriver" TEXT,
    "bmcAddress" TEXT,
    "bmcCredentialsRef" TEXT,
    "bmcCaPem" TEXT,
    "macs" JSONB,
    "productUuid" TEXT,
    "arch" TEXT,
    "uefi" BOOLEAN NOT NULL DEFAULT true,
    "labels" JSONB,
    "inventory" JSONB,
    "hostSpec" JSONB
);
INSERT INTO "new_Node" ("createdAt", "deletedAt", "id", "poolId", "provisionState", "role", "siteId", "tenantId", "updatedAt", "version") SELECT "createdAt", "deletedAt", "id", "poolId", "provisionState", "role", "siteId", "tenantId", "updatedAt", "version" FROM "Node";
DROP TABLE "Node";
ALTER TABLE "new_Node" RENAME TO "Node";
CREATE INDEX "Node_siteId_idx" ON "Node"("siteId");
CREATE INDEX "Node_poolId_idx" ON "Node"("poolId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

