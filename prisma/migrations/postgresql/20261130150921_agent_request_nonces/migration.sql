-- CreateTable
CREATE TABLE "AgentRequestNonce" (
    "nodeId" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AgentRequestNonce_pkey" PRIMARY KEY ("nodeId","nonce")
);

-- CreateIndex
CREATE INDEX "AgentRequestNonce_expiresAt_idx" ON "AgentRequestNonce"("expiresAt");

