-- AlterTable
ALTER TABLE "Node" ADD COLUMN "discoveredMac" TEXT;
ALTER TABLE "Node" ADD COLUMN "macSource" TEXT;

-- CreateTable
CREATE TABLE "DiscoveredMac" (
    "agentNodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "mac" TEXT NOT NULL,
    "productUuid" TEXT,
    "arch" TEXT NOT NULL,
    "relay" TEXT,
    "firstSeen" DATETIME NOT NULL,
    "lastSeen" DATETIME NOT NULL,
    "count" INTEGER NOT NULL,

    PRIMARY KEY ("agentNodeId", "mac")
);

-- CreateTable
CREATE TABLE "DiscoveryReport" (
    "agentNodeId" TEXT NOT NULL PRIMARY KEY,
    "siteId" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "DiscoveredMac_siteId_lastSeen_idx" ON "DiscoveredMac"("siteId", "lastSeen");

-- CreateIndex
CREATE INDEX "DiscoveredMac_productUuid_idx" ON "DiscoveredMac"("productUuid");

