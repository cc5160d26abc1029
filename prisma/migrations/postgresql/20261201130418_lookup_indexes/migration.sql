-- CreateIndex
CREATE INDEX "Event_subjectId_type_seq_idx" ON "Event"("subjectId", "type", "seq");

-- CreateIndex
CREATE INDEX "AgentSession_siteId_role_idx" ON "AgentSession"("siteId", "role");

