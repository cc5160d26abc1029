-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "discoveredMac" TEXT,
ADD COLUMN     "macSource" TEXT;

-- CreateTable
CREATE TABLE "DiscoveredMac" (
    "agentNodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "mac" TEXT NOT NULL,
    "productUuid" TEXT,
    "arch" TEXT NOT NULL,
    "relay" TEXT,
    "firstSeen" TIMESTAMP(3) NOT NULL,
    "lastSeen" TIMESTAMP(3) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "DiscoveredMac_pkey" PRIMARY KEY ("agentNodeId","mac")
);

-- CreateTable
CREATE TABLE "DiscoveryReport" (
    "agentNodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DiscoveryReport_pkey" PRIMARY KEY ("agentNodeId")
);

-- CreateIndex
CREATE INDEX "DiscoveredMac_siteId_lastSeen_idx" ON "DiscoveredMac"("siteId", "lastSeen");

-- CreateIndex
CREATE INDEX "DiscoveredMac_productUuid_idx" ON "DiscoveredMac"("productUuid");

