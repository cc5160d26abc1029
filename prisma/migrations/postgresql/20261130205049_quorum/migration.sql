-- CreateTable
CREATE TABLE "QuorumPolicy" (
    "tenantId" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "sha256" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "QuorumPolicy_pkey" PRIMARY KEY ("tenantId")
);

-- CreateTable
CREATE TABLE "QuorumBatch" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "sha256" TEXT NOT NULL,
    "nodeIds" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "approvedAt" TIMESTAMP(3),

    CONSTRAINT "QuorumBatch_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "QuorumApproval" (
    "batchId" TEXT NOT NULL,
    "approverId" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "QuorumApproval_pkey" PRIMARY KEY ("batchId","approverId")
);

-- CreateIndex
CREATE INDEX "QuorumBatch_tenantId_status_createdAt_idx" ON "QuorumBatch"("tenantId", "status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "QuorumBatch_tenantId_subject_key" ON "QuorumBatch"("tenantId", "subject");

