-- CreateTable
CREATE TABLE "Tenant" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Tenant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiCredential" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "permissions" JSONB NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiCredential_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Event" (
    "seq" SERIAL NOT NULL,
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "subjectId" TEXT,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "Secret" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "nonce" BYTEA NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3),

    CONSTRAINT "Secret_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SystemCheck" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "workerId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMP(3),

    CONSTRAINT "SystemCheck_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Site" (
    "id" TEXT NOT NULL,
    "ownerTenantId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "region" TEXT NOT NULL,
    "iamRegion" TEXT,
    "callerId" TEXT NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "everReferenced" BOOLEAN NOT NULL DEFAULT false,
    "deletedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Site_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Pool" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "policy" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "idempotencyKey" TEXT,
    "deletedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Pool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Node" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "poolId" TEXT,
    "role" TEXT NOT NULL,
    "provisionState" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "deletedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JoinToken" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "poolId" TEXT,
    "nodeId" TEXT,
    "role" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "maxUses" INTEGER NOT NULL,
    "usesLeft" INTEGER NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "idempotencyKey" TEXT,
    "requestHash" TEXT,
    "expectMac" TEXT,
    "workflowId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JoinToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NodeCertificate" (
    "serial" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "siteId" TEXT,
    "fingerprint" TEXT NOT NULL,
    "notBefore" TIMESTAMP(3) NOT NULL,
    "notAfter" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NodeCertificate_pkey" PRIMARY KEY ("serial")
);

-- CreateTable
CREATE TABLE "JoinRequest" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "mac" TEXT,
    "detail" JSONB,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "decidedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JoinRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BootLease" (
    "siteId" TEXT NOT NULL,
    "holderNodeId" TEXT,
    "epoch" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "BootLease_pkey" PRIMARY KEY ("siteId")
);

-- CreateTable
CREATE TABLE "Profile" (
    "tenantId" TEXT NOT NULL,
    "profileId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "visibility" TEXT NOT NULL,
    "lockedAt" TIMESTAMP(3),
    "rowVersion" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Profile_pkey" PRIMARY KEY ("tenantId","profileId","version")
);

-- CreateTable
CREATE TABLE "AgentSession" (
    "nodeId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "connectedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,
    "taskQueue" TEXT NOT NULL,

    CONSTRAINT "AgentSession_pkey" PRIMARY KEY ("nodeId")
);

-- CreateTable
CREATE TABLE "Image" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "ref" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "compression" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "source" TEXT NOT NULL,
    "signerId" TEXT,
    "signerTenantId" TEXT,
    "signature" TEXT,
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "visibility" TEXT NOT NULL DEFAULT 'private',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Image_pkey" PRIMARY KEY ("id"),
    -- An unsigned image stays private to its tenant forever (spec 003).
    CONSTRAINT "Image_unsigned_private" CHECK ("visibility" = 'private' OR "verified" = true)
);

-- CreateTable
CREATE TABLE "ImageSigner" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "publicKeyPem" TEXT NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ImageSigner_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "ImageLocation" (
    "imageId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "pinnedUntil" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ImageLocation_pkey" PRIMARY KEY ("imageId","siteId")
);

-- CreateTable
CREATE TABLE "NodeImageCache" (
    "nodeId" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "NodeImageCache_pkey" PRIMARY KEY ("nodeId","sha256")
);

-- CreateIndex
CREATE INDEX "ApiCredential_tenantId_idx" ON "ApiCredential"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "Event_id_key" ON "Event"("id");

-- CreateIndex
CREATE INDEX "Event_tenantId_seq_idx" ON "Event"("tenantId", "seq");

-- CreateIndex
CREATE INDEX "Site_ownerTenantId_idx" ON "Site"("ownerTenantId");

-- CreateIndex
CREATE INDEX "Pool_siteId_idx" ON "Pool"("siteId");

-- CreateIndex
CREATE UNIQUE INDEX "Pool_tenantId_idempotencyKey_key" ON "Pool"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE INDEX "Node_siteId_idx" ON "Node"("siteId");

-- CreateIndex
CREATE INDEX "Node_poolId_idx" ON "Node"("poolId");

-- CreateIndex
CREATE INDEX "JoinToken_siteId_idx" ON "JoinToken"("siteId");

-- CreateIndex
CREATE UNIQUE INDEX "JoinToken_tenantId_idempotencyKey_key" ON "JoinToken"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "NodeCertificate_fingerprint_key" ON "NodeCertificate"("fingerprint");

-- CreateIndex
CREATE INDEX "NodeCertificate_nodeId_idx" ON "NodeCertificate"("nodeId");

-- CreateIndex
CREATE INDEX "JoinRequest_siteId_status_idx" ON "JoinRequest"("siteId", "status");

-- CreateIndex
CREATE INDEX "Profile_profileId_visibility_idx" ON "Profile"("profileId", "visibility");

-- CreateIndex
CREATE INDEX "Image_visibility_kind_idx" ON "Image"("visibility", "kind");

-- CreateIndex
CREATE UNIQUE INDEX "Image_tenantId_ref_key" ON "Image"("tenantId", "ref");

-- AddForeignKey
ALTER TABLE "ApiCredential" ADD CONSTRAINT "ApiCredential_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

