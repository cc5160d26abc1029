-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "maintenanceReason" TEXT,
ADD COLUMN     "maintenanceSource" TEXT;

