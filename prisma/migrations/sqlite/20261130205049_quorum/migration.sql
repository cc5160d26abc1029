-- CreateTable
CREATE TABLE "QuorumPolicy" (
    "tenantId" TEXT NOT NULL PRIMARY KEY,
    "document" JSONB NOT NULL,
    "sha256" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "QuorumBatch" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "sha256" TEXT NOT NULL,
    "nodeIds" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "approvedAt" DATETIME
);

-- CreateTable
CREATE TABLE "QuorumApproval" (
    "batchId" TEXT NOT NULL,
    "approverId" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("batchId", "approverId")
);

-- CreateIndex
CREATE INDEX "QuorumBatch_tenantId_status_createdAt_idx" ON "QuorumBatch"("tenantId", "status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "QuorumBatch_tenantId_subject_key" ON "QuorumBatch"("tenantId", "subject");

