-- AlterTable
ALTER TABLE "Node" ADD COLUMN "maintenanceReason" TEXT;
ALTER TABLE "Node" ADD COLUMN "maintenanceSource" TEXT;

